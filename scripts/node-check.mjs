#!/usr/bin/env node
// Runs a Periscope entry point (`node scripts/node-check.mjs <file> [args...]`) on a Node that can run it.
// The npm scripts go through here so that an older Node gets one clear line instead of
// "Unknown file extension .ts". Plain JavaScript that parses on very old Node: no TypeScript, no new syntax.
//
// - Node >= 22.19 (type stripping, Effect 4): the file runs in this very process (no extra process,
//   so signals such as SIGHUP reach the server directly).
// - An older Node: a Node 24 kept in <project>/.ci/node is used (fetched from npm the first time, as
//   .ci/run does), with a printed line saying so; the child gets that Node first on its PATH, so the
//   processes it starts use it too. PERISCOPE_NODE=<path> names another Node binary to use.
//   PERISCOPE_NO_NODE_DOWNLOAD=1 turns the fetch off: then it stops with one sentence.
import { spawn, spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { delimiter, dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

var NEED = [22, 19]
var NEED_TEXT = NEED.join(".")
var root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
var ciNode = join(root, ".ci", "node", "node_modules", ".bin", process.platform === "win32" ? "node.cmd" : "node")

function suitable(version) {
  var parts = String(version).replace(/^v/, "").split(".").map(Number)
  return parts[0] > NEED[0] || (parts[0] === NEED[0] && parts[1] >= NEED[1])
}

function versionOf(binary) {
  if (!existsSync(binary)) return undefined
  var out = spawnSync(binary, ["-p", "process.versions.node"], { encoding: "utf8" })
  return out.status === 0 ? out.stdout.trim() : undefined
}

function stop(sentence) {
  process.stderr.write("periscope: " + sentence + "\n")
  process.exit(1)
}

var args = process.argv.slice(2)
if (args.length === 0) stop("usage: node scripts/node-check.mjs <entry file> [arguments...]")
var entry = resolve(args[0])
var rest = args.slice(1)

if (suitable(process.versions.node)) {
  // Same process: the entry sees the argv it would see as `node <entry> <args>`.
  process.argv = [process.argv[0], entry].concat(rest)
  await import(pathToFileURL(entry).href)
} else {
  var here = process.versions.node
  var how = "install Node 24 from https://nodejs.org/ (or with nvm: nvm install 24), or run " +
    "`npm install --prefix .ci/node node@24` in " + root + " and npm will use it"
  var binary = process.env.PERISCOPE_NODE
  if (binary !== undefined && !suitable(versionOf(binary) || "0")) {
    stop("PERISCOPE_NODE (" + binary + ") is not a Node " + NEED_TEXT + " or newer; " + how + ".")
  }
  if (binary === undefined && suitable(versionOf(ciNode) || "0")) binary = ciNode
  if (binary === undefined) {
    if (process.env.PERISCOPE_NO_NODE_DOWNLOAD === "1") {
      stop("Periscope needs Node " + NEED_TEXT + " or newer and this is Node " + here + ": " + how + ".")
    }
    process.stderr.write(
      "periscope: Node " + here + " is older than " + NEED_TEXT + "; fetching Node 24 from npm into " +
        join(root, ".ci", "node") + " (once; set PERISCOPE_NO_NODE_DOWNLOAD=1 to stop instead)\n"
    )
    var npm = process.platform === "win32" ? "npm.cmd" : "npm"
    var fetched = spawnSync(npm, [
      "install", "--prefix", join(root, ".ci", "node"), "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "node@24"
    ], { stdio: ["ignore", "ignore", "inherit"] })
    if (fetched.status !== 0 || !suitable(versionOf(ciNode) || "0")) {
      stop("Periscope needs Node " + NEED_TEXT + " or newer, this is Node " + here + ", and Node 24 could not be fetched from npm: " + how + ".")
    }
    binary = ciNode
  }
  process.stderr.write("periscope: Node " + here + " is older than " + NEED_TEXT + "; running with Node " + versionOf(binary) + " from " + binary + "\n")
  var env = Object.assign({}, process.env)
  env.PATH = dirname(binary) + delimiter + (process.env.PATH || "")
  var child = spawn(binary, [entry].concat(rest), { stdio: "inherit", env: env })
  // The child is the real program: pass it every signal a server listens to, and leave with its status.
  ;["SIGINT", "SIGTERM", "SIGHUP"].forEach(function(signal) {
    process.on(signal, function() { child.kill(signal) })
  })
  child.on("exit", function(code, signal) {
    if (signal) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    } else process.exit(code === null ? 1 : code)
  })
}
