// `npm run build` (and `prepack`, `prepare`): the package's JavaScript and .d.ts in dist/, compiled by
// TypeScript from the same .ts files that Node, Deno and vitest run as they are (tsconfig.build.json:
// core, adapters/node, adapters/embed; imports rewritten from .ts to .js). The bin (bin.js, which
// checks the Node version before it loads cli.js) keeps its shebang and is made executable.
//
// --prepare (the `prepare` script): npm runs it on `npm install` in a checkout and when it installs
// the package from a git URL, whose clone has no dist/ yet. It emits without type checking (an
// install must not fail on a tree mid-edit), and does nothing under `npm pack`/`npm publish`,
// whose `prepack` builds with the check.
import { spawnSync } from "node:child_process"
import { chmodSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "dist")
const tsc = join(dirname(createRequire(join(root, "package.json")).resolve("typescript/package.json")), "bin", "tsc")

const prepare = process.argv.includes("--prepare")
if (prepare && (process.env.npm_command === "pack" || process.env.npm_command === "publish")) process.exit(0)

rmSync(dist, { recursive: true, force: true })
// --no-check: emit without type checking (while a tree is mid-edit); `npm pack` always checks.
const noCheck = prepare || process.argv.includes("--no-check") ? ["--noCheck"] : []
const compiled = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), ...noCheck], { cwd: root, stdio: "inherit" })
if (compiled.status !== 0) {
  process.stderr.write("build: tsc failed; nothing to pack\n")
  process.exit(compiled.status ?? 1)
}
chmodSync(join(dist, "adapters", "node", "bin.js"), 0o755)
process.stderr.write(`build: ${dist} ready\n`)
