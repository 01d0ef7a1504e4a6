/**
 * Every config file example in README.md and docs/*.md is one the server accepts: each ```json
 * block whose keys are config file keys decodes as the config file does at start (unknown keys
 * refused), so a user who copies it gets a server, not an error.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { decoderFor } from "../../core/schema/Decode.ts"

const root = resolve(import.meta.dirname, "../..")
const decode = decoderFor(ConfigFile, "file", { unknownKeys: "error" })
const configKeys = new Set(Object.keys(ConfigFile.fields))

const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]

/** The ```json blocks of a file that are config files (every top-level key a config key), with their line. */
const configBlocks = (file: string): Array<{ readonly line: number; readonly config: unknown }> => {
  const text = readFileSync(join(root, file), "utf8")
  return [...text.matchAll(/^```json\n([\s\S]*?)^```/gm)].flatMap((m) => {
    const line = text.slice(0, m.index).split("\n").length
    const value: unknown = JSON.parse(m[1]!)
    const isConfig = typeof value === "object" && value !== null && !Array.isArray(value) &&
      Object.keys(value).length > 0 && Object.keys(value).every((k) => configKeys.has(k))
    return isConfig ? [{ line, config: value }] : []
  })
}

describe("config examples in the docs", () => {
  it("decode as the server decodes its config file", () => {
    const blocks = files.flatMap((file) => configBlocks(file).map((b) => ({ ...b, file })))
    expect(blocks.length).toBeGreaterThanOrEqual(15)
    const refused = blocks.flatMap(({ file, line, config }) => {
      const decoded = decode(config)
      return Result.isSuccess(decoded) ? [] : [`${file}:${line}: ${decoded.failure.message}`]
    })
    expect(refused).toEqual([])
  })
})
