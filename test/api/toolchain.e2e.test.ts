/** core/ stays pure and type-checks on Deno; the whole project type-checks with tsc. */
import { execFile } from "node:child_process"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")
const run = promisify(execFile)

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith(".ts") ? [path] : []
  })

describe("toolchain", () => {
  it("deno check passes over core/ and adapters/deno", async () => {
    // A type error makes deno exit non-zero, which rejects; the output lists "Check <file>" lines only.
    const { stderr } = await run(resolve(root, "node_modules/.bin/deno"), ["check", "core", "adapters/deno"], { cwd: root, timeout: 300_000, env: { ...process.env, NO_COLOR: "1" } })
    expect(stderr).not.toMatch(/\[ERROR\]|^error:/m)
    expect(stderr).toMatch(/Check .*core\/api\/HttpApp\.ts/)
  }, 300_000)

  it("deno.json maps each npm import to the version package.json pins", () => {
    const deno = JSON.parse(readFileSync(resolve(root, "deno.json"), "utf8")) as { imports: Record<string, string> }
    const pkg = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as { dependencies: Record<string, string> }
    for (const [name, target] of Object.entries(deno.imports)) {
      const bare = name.replace(/\/$/, "")
      expect(pkg.dependencies[bare], `${bare} is a dependency`).toBeDefined()
      expect(target).toBe(name.endsWith("/") ? `npm:/${bare}@${pkg.dependencies[bare]}/` : `npm:${bare}@${pkg.dependencies[bare]}`)
    }
  })

  it("core/ imports no node:*, Deno or process", () => {
    const offenders = filesUnder(resolve(root, "core")).filter((file) => {
      const source = readFileSync(file, "utf8")
      return /from\s+["']node:|import\(["']node:|\bDeno\.|\bprocess\.(env|exit|argv|cwd)/.test(source)
    })
    expect(offenders).toEqual([])
  })
})
