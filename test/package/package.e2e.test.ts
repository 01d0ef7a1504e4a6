/**
 * The package as a user gets it: `npm pack` (which builds), installed into a
 * fresh project outside the checkout, then used from there: imported from
 * plain Node 24 and from Deno, type-checked by the consumer's own tsc with a
 * standard NodeNext config, and its bin run through npx (version, index, keys,
 * serve, reload).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ConsumerProject, env, makeConsumerProject, packTarball, root } from "./consumerProject.ts"
import { freePort } from "../support/servers.ts"

const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version

/** The system's Node when it is older than the package needs (Debian's Node 20, say). */
const olderNode = (() => {
  const binary = "/usr/bin/node"
  if (!existsSync(binary)) return undefined
  const version = spawnSync(binary, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim()
  const [major = 0, minor = 0] = version.split(".").map(Number)
  return major < 22 || (major === 22 && minor < 19) ? { binary, version } : undefined
})()
const deno = join(root, "node_modules/.bin/deno")

let packDir: string
let project: ConsumerProject

beforeAll(() => {
  packDir = mkdtempSync(join(tmpdir(), "periscope-pack-"))
  project = makeConsumerProject(packTarball(packDir))
}, 400_000)

afterAll(() => {
  for (const dir of [packDir, project?.dir]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const write = (file: string, text: string) => {
  mkdirSync(join(project.dir, file, ".."), { recursive: true })
  writeFileSync(join(project.dir, file), text)
}

const embedProgram = (specifier: string, runtime: string) => `
import { createPeriscope } from "${specifier}"
const periscope = createPeriscope({
  search: { documents: [{ url: "https://example.org/otters", title: "Sea otters", text: "Sea otters hold hands while they sleep." }] },
  chat: { models: ["m"], replies: [{ content: "otters sleep holding hands" }] }
})
const data = await periscope.webSearch({ keywords: "otters" })
let text = ""
let chunks = 0
for await (const chunk of periscope.chatStream({ model: "m", messages: [{ role: "user", content: "hi" }] })) {
  chunks++
  text += chunk.choices[0]?.delta.content ?? ""
}
console.log(JSON.stringify({ runtime: "${runtime}", links: data.organic.map((r) => r.link), text, chunks }))
await periscope.close()
`

describe("the packed tarball", () => {
  it("holds compiled JavaScript with .d.ts, the license and README, and no tests or TypeScript sources", () => {
    const listing = execFileSync("tar", ["tvzf", project.tarball], { encoding: "utf8" }).trim().split("\n")
    const files = listing.map((line) => line.split(/\s+/).pop()!)
    expect(files).toContain("package/LICENSE")
    expect(files).toContain("package/README.md")
    expect(files).toContain("package/dist/adapters/embed/index.js")
    expect(files).toContain("package/dist/adapters/embed/index.d.ts")
    const other = files.filter((f) => !/^package\/(dist\/.*\.(js|d\.ts)|LICENSE|README\.md|package\.json)$/.test(f))
    expect(other).toEqual([])
    expect(files.filter((f) => f.includes(".test.") || f.startsWith("package/test/"))).toEqual([])
    const bin = listing.find((line) => line.endsWith("package/dist/adapters/node/bin.js"))!
    expect(bin.startsWith("-rwx")).toBe(true)
    const pkg = JSON.parse(readFileSync(join(project.dir, "node_modules/periscope-search/package.json"), "utf8")) as Record<string, unknown>
    expect(pkg.private).toBeUndefined()
    expect(pkg.license).toBe("MIT")
  })
})

describe("installed in a fresh project", () => {
  it("imports from plain Node 24 and runs a search and a streamed chat", () => {
    write("src/embed.mjs", embedProgram("periscope-search", "node"))
    const out = JSON.parse(project.run("node", ["src/embed.mjs"]).trim())
    expect(out).toEqual({ runtime: "node", links: ["https://example.org/otters"], text: "otters sleep holding hands", chunks: expect.any(Number) })
    expect(out.chunks).toBeGreaterThan(1)
  }, 60_000)

  it("type-checks a consumer with a standard NodeNext tsconfig, and the types are real (a wrong field is an error)", () => {
    write("tsconfig.json", JSON.stringify({
      compilerOptions: { target: "es2022", module: "nodenext", moduleResolution: "nodenext", strict: true, skipLibCheck: false, noEmit: true, types: ["node"] },
      include: ["src/**/*.ts"]
    }))
    write("src/app.ts", `
import { createPeriscope, PeriscopeError, type ChatCompletionChunk, type ChatCompletionRequest, type SearchRequest } from "periscope-search"
const periscope = createPeriscope()
const request: ChatCompletionRequest = {
  model: "periscope-grounded",
  messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "What is Periscope?" }],
  temperature: 0.2,
  tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }]
}
const search: SearchRequest = { keywords: "periscope", num: 3 }
export async function main(): Promise<string> {
  const data = await periscope.webSearch(search)
  const link: string | undefined = data.organic[0]?.link
  const images = await periscope.imageSearch({ keywords: "periscope" })
  const chunks: Array<ChatCompletionChunk> = []
  for await (const chunk of periscope.chatStream(request)) chunks.push(chunk)
  const whole = await periscope.chat(request)
  try {
    await periscope.webSearch({ keywords: "" })
  } catch (error) {
    if (error instanceof PeriscopeError) return \`\${error.status} \${error.param}\`
  }
  return \`\${link} \${images.length} \${whole.choices[0]?.message.content} \${chunks.length}\`
}
// @ts-expect-error model must be a string
export const wrongModel: ChatCompletionRequest = { model: 42, messages: [] }
// @ts-expect-error keywords is required
export const noKeywords: SearchRequest = { num: 3 }
// @ts-expect-error chat takes a request object
export const wrongCall = () => periscope.chat("hello")
`)
    const tsc = join(project.dir, "node_modules/.bin/tsc")
    let output = ""
    try {
      output = project.run(tsc, ["-p", "."])
    } catch (error) {
      output = String((error as { stdout?: string }).stdout) + String((error as { stderr?: string }).stderr)
    }
    expect(output.trim()).toBe("")
  }, 120_000)

  it("imports from Deno through npm (the compiled JavaScript), offline from node_modules", () => {
    write("src/embed.deno.ts", embedProgram("npm:periscope-search", "deno"))
    const out = project.run(deno, ["run", "--quiet", "--allow-read", "--allow-env", "--allow-net", "src/embed.deno.ts"], {
      env: { DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1" }
    })
    expect(JSON.parse(out.trim())).toMatchObject({ runtime: "deno", links: ["https://example.org/otters"], text: "otters sleep holding hands" })
  }, 120_000)
})

describe("the bin from npx", () => {
  const npx = (args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) =>
    project.run("npx", ["--no-install", ...args], { env: { PERISCOPE_DATA_DIR: join(project.dir, "data"), ...extraEnv } })
  let server: ChildProcess | undefined

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      server.kill("SIGTERM")
      await new Promise((resolve) => server!.once("exit", resolve))
    }
  })

  it("prints its version", () => {
    expect(npx(["periscope", "--version"]).trim()).toBe(`periscope v${version}`)
    expect(npx(["periscope-search", "--version"]).trim()).toBe(`periscope v${version}`)
    // As a global install links it: the bin through a symlink elsewhere, run from an unrelated directory.
    const globalBin = mkdtempSync(join(tmpdir(), "periscope-global-bin-"))
    try {
      symlinkSync(join(project.dir, "node_modules/periscope-search/dist/adapters/node/bin.js"), join(globalBin, "periscope"))
      const out = execFileSync(join(globalBin, "periscope"), ["--version"], { cwd: tmpdir(), env, encoding: "utf8" })
      expect(out.trim()).toBe(`periscope v${version}`)
    } finally {
      rmSync(globalBin, { recursive: true, force: true })
    }
  }, 60_000)

  it.skipIf(olderNode === undefined)(`on an older Node says in one sentence which Node it needs${olderNode === undefined ? " (skipped: no Node older than 22.19 at /usr/bin/node)" : ""}`, () => {
    // The installed bin as a shell runs it: its `#!/usr/bin/env node` finds the older Node first on PATH.
    const bin = join(project.dir, "node_modules/.bin/periscope")
    for (const args of [["--version"], ["serve"]]) {
      const result = spawnSync(bin, args, {
        cwd: project.dir,
        encoding: "utf8",
        env: { ...env, PATH: `${olderNode!.binary.replace(/\/node$/, "")}:/bin`, PERISCOPE_DATA_DIR: join(project.dir, "data") }
      })
      expect(result.status).toBe(1)
      expect(result.stdout).toBe("")
      expect(result.stderr).toBe(
        `periscope: Periscope needs Node 22.19 or newer and this is Node ${olderNode!.version}: ` +
          "install Node 24 from https://nodejs.org/ (or with nvm: nvm install 24) and run it again.\n"
      )
    }
    // The Node it names is the one the package declares.
    expect(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node).toBe(">=22.19")
  })

  it("indexes a folder of HTML, makes a key, serves the index with it and reloads it", async () => {
    write("site/otters.html", "<!doctype html><html><head><title>Sea otters</title></head><body><h1>Sea otters</h1>" +
      "<p>Sea otters hold hands while they sleep so that they do not drift apart in the kelp forest.</p></body></html>")
    write("site/guide/beavers.html", "<!doctype html><html><head><title>Beavers</title></head><body><h1>Beavers</h1>" +
      "<p>Beavers build dams out of branches and mud across small rivers.</p></body></html>")
    const summary = npx(["periscope", "index", "./site=https://docs.example.com/", "--quiet"])
    expect(summary).toMatch(/Indexed 2 documents/)
    expect(existsSync(join(project.dir, "data/index.snapshot"))).toBe(true)

    const key = npx(["periscope", "keys", "create", "ci", "--requests-per-minute", "120"]).trim()
    expect(key).toMatch(/^psk_[A-Za-z0-9_-]{43}$/)
    const keysFile = readFileSync(join(project.dir, "data/keys.json"), "utf8")
    expect(keysFile).not.toContain(key)
    const list = npx(["periscope", "keys", "list"])
    expect(list).toMatch(/^ci\s+[0-9a-f]{12}\s+120$/m)
    expect(list).not.toContain(key)

    const port = await freePort()
    server = spawn(join(project.dir, "node_modules/.bin/periscope"), ["serve", "--port", String(port), "--host", "127.0.0.1"], {
      cwd: project.dir,
      env: { ...env, PERISCOPE_DATA_DIR: join(project.dir, "data") },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let log = ""
    server.stdout!.on("data", (d) => (log += d))
    server.stderr!.on("data", (d) => (log += d))
    const search = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/api/search/webSearch`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ keywords: "otters kelp" }),
        signal: AbortSignal.timeout(30_000)
      })
      return { status: response.status, body: await response.json() as { data: { organic: Array<{ link: string }> } } }
    }
    const deadline = Date.now() + 60_000
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false)
      if (ok) break
      if (Date.now() > deadline || server.exitCode !== null) throw new Error(`the server did not start:\n${log}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    const first = await search()
    expect(first.status).toBe(200)
    expect(first.body.data.organic[0]!.link).toBe("https://docs.example.com/otters.html")

    // reload: the PID file the server keeps names it; SIGHUP reaches it and it keeps answering.
    const pidFile = join(project.dir, "data/periscope.pid")
    expect(existsSync(pidFile)).toBe(true)
    expect(Number(readFileSync(pidFile, "utf8").trim())).toBe(server.pid)
    expect(npx(["periscope", "reload"])).toMatch(new RegExp(`Sent SIGHUP to Periscope \\(PID ${server.pid}\\)`))
    await new Promise((r) => setTimeout(r, 500))
    expect(server.exitCode).toBeNull()
    expect((await search()).status).toBe(200)

    server.kill("SIGTERM")
    await new Promise((resolve) => server!.once("exit", resolve))
    const stopped = (() => {
      try {
        npx(["periscope", "reload"])
        return ""
      } catch (error) {
        return String((error as { stderr?: string }).stderr)
      }
    })()
    expect(stopped).toMatch(/no Periscope server is running|which is not running/)
  }, 180_000)
})
