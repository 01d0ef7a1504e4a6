// `npm run build` (and `prepack`, `postprepare`): the package's JavaScript and .d.ts in dist/, compiled
// by TypeScript from the same .ts files that Node, Deno and vitest run as they are (tsconfig.build.json:
// core, adapters/node, adapters/embed; imports rewritten from .ts to .js). The bin (bin.js, which
// checks the Node version before it loads cli.js) keeps its shebang and is made executable.
//
// `postprepare` runs it with --no-check on every `npm install` in a checkout, the one npm runs in its
// clone when it installs the package from a git URL included (that clone has no dist/ yet; a type
// error must not fail an install). Not `prepare`: npm lists a package with a prepare script as
// having install scripts to everyone who installs its tarball, though it never runs it there.
import { spawnSync } from "node:child_process"
import { chmodSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "dist")
const tsc = join(dirname(createRequire(join(root, "package.json")).resolve("typescript/package.json")), "bin", "tsc")

rmSync(dist, { recursive: true, force: true })
// --no-check: emit without type checking (while a tree is mid-edit); `npm pack` always checks.
const noCheck = process.argv.includes("--no-check") ? ["--noCheck"] : []
const compiled = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), ...noCheck], { cwd: root, stdio: "inherit" })
if (compiled.status !== 0) {
  process.stderr.write("build: tsc failed; nothing to pack\n")
  process.exit(compiled.status ?? 1)
}
chmodSync(join(dist, "adapters", "node", "bin.js"), 0o755)
process.stderr.write(`build: ${dist} ready\n`)
