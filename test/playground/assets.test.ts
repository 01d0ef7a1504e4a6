/**
 * The playground's browser files are real files the type checker reads; the
 * core serves them from a generated module. Here: that module is never stale
 * against the files (so an edit cannot be forgotten), the check catches a
 * stale one, and the files pass their type check (the same run as `npm run typecheck`).
 */
import { spawnSync } from "node:child_process"
import { appendFileSync, cpSync, mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { root } from "../support/servers.ts"

const script = join(root, "scripts/playground-assets.mjs")
const run = (file: string, args: ReadonlyArray<string>, cwd = root) =>
  spawnSync(process.execPath, [file, ...args], { cwd, encoding: "utf8", timeout: 60_000 })

describe("the playground's files", () => {
  it("core/api/playground/PlaygroundAssets.ts holds the files as they are", () => {
    const result = run(script, ["--check"])
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
  })

  it("a stale module fails the check with the command that fixes it, and that command fixes it", () => {
    const copy = mkdtempSync(join(tmpdir(), "periscope-playground-"))
    try {
      cpSync(join(root, "scripts/playground-assets.mjs"), join(copy, "scripts/playground-assets.mjs"))
      cpSync(join(root, "core/api/playground"), join(copy, "core/api/playground"), { recursive: true })
      appendFileSync(join(copy, "core/api/playground/playground.css"), ".new-rule { color: inherit; }\n")
      const stale = run(join(copy, "scripts/playground-assets.mjs"), ["--check"], copy)
      expect(stale.status).toBe(1)
      expect(stale.stderr).toContain("core/api/playground/PlaygroundAssets.ts is stale")
      expect(stale.stderr).toContain("node scripts/playground-assets.mjs")
      expect(run(join(copy, "scripts/playground-assets.mjs"), [], copy).status).toBe(0)
      const fresh = run(join(copy, "scripts/playground-assets.mjs"), ["--check"], copy)
      expect(fresh.stderr).toBe("")
      expect(fresh.status).toBe(0)
    } finally {
      rmSync(copy, { recursive: true, force: true })
    }
  })

  it("the browser modules pass the type checker (JSDoc types, strict, DOM only)", () => {
    const tsc = join(dirname(createRequire(join(root, "package.json")).resolve("typescript/package.json")), "bin", "tsc")
    const result = run(tsc, ["-p", "core/api/playground/tsconfig.json"])
    expect(result.stdout + result.stderr).toBe("")
    expect(result.status).toBe(0)
  })
})
