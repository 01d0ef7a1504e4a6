/**
 * docs/configuration.md lists every setting, and only settings that exist: each key of the config
 * file's schema (from its JSON Schema) is covered by a row (the key itself, or the row of the
 * object it sits in, such as `chat.upstreams.<name>.timeouts`), each row's config key is in the
 * schema, and each environment variable a row names is read somewhere in the sources.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { ConfigFile } from "../../core/config/ConfigFile.ts"

const root = resolve(import.meta.dirname, "../..")
const doc = readFileSync(join(root, "docs/configuration.md"), "utf8")

type JsonSchema = {
  readonly $ref?: string
  readonly type?: string
  readonly items?: JsonSchema
  readonly properties?: Record<string, JsonSchema>
  readonly additionalProperties?: JsonSchema | boolean
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly oneOf?: ReadonlyArray<JsonSchema>
}

/** Every key path of the config file, written as the docs write them: `a.b`, `list[].c`, `map.<name>.d`. */
const schemaPaths = (): Set<string> => {
  const document = Schema.toJsonSchemaDocument(ConfigFile) as unknown as { schema: JsonSchema; definitions?: Record<string, JsonSchema>; $defs?: Record<string, JsonSchema> }
  const definitions = document.definitions ?? document.$defs ?? {}
  const deref = (s: JsonSchema | undefined): JsonSchema | undefined => (s?.$ref !== undefined ? deref(definitions[s.$ref.split("/").pop()!]) : s)
  const paths = new Set<string>()
  const walk = (node: JsonSchema | undefined, path: string, depth: number): void => {
    const s = deref(node)
    if (s === undefined || depth > 12) return
    for (const part of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) walk(part, path, depth + 1)
    if (s.items !== undefined) walk(s.items, `${path}[]`, depth + 1)
    for (const [key, value] of Object.entries(s.properties ?? {})) {
      const child = path === "" ? key : `${path}.${key}`
      paths.add(child)
      walk(value, child, depth + 1)
    }
    if (typeof s.additionalProperties === "object") walk(s.additionalProperties, `${path}.<name>`, depth + 1)
  }
  walk(document.schema, "", 0)
  return paths
}

/** The settings the tables name: the first cell's keys (`.x` after a key is its sibling) and the file key of "env, file `key`". */
const documented = (): { readonly fileKeys: Set<string>; readonly envNames: Set<string> } => {
  const fileKeys = new Set<string>()
  const envNames = new Set<string>()
  for (const line of doc.split("\n")) {
    const cells = line.match(/^\|(.*)\|\s*$/)?.[1]?.split(" | ")
    if (cells === undefined || cells.length < 3 || /^-+$/.test(cells[0]!.trim()) || cells[0]!.trim() === "Setting") continue
    let previous: string | undefined
    for (const [token] of cells[0]!.matchAll(/`([^`]+)`/g)) {
      const name = token.slice(1, -1)
      if (/^[A-Z][A-Z0-9_]*$/.test(name)) envNames.add(name)
      else if (name.startsWith(".") && previous !== undefined) fileKeys.add(previous.slice(0, previous.lastIndexOf(".")) + name)
      else fileKeys.add((previous = name))
    }
    for (const [, key] of cells[1]!.matchAll(/file `([^`]+)`/g)) fileKeys.add(key!)
  }
  return { fileKeys, envNames }
}

const sourceText = (): string => {
  const texts: Array<string> = []
  const read = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) read(path)
      else if (/\.(ts|mjs|js)$/.test(name)) texts.push(readFileSync(path, "utf8"))
    }
  }
  for (const dir of ["core", "adapters", "scripts", "test/support"]) read(join(root, dir))
  return texts.join("\n")
}

describe("docs/configuration.md", () => {
  const paths = schemaPaths()
  const { fileKeys, envNames } = documented()

  it("has a row for every key of the config file", () => {
    expect(paths.size).toBeGreaterThan(50)
    const covered = (path: string) => {
      for (let p = path; p !== ""; p = p.replace(/(\[\]|\.[^.[\]]+)$/, "")) {
        if (fileKeys.has(p)) return true
        if (!/(\[\]|\.[^.[\]]+)$/.test(p)) break
      }
      return false
    }
    // A key with keys under it is covered by those; a key without is covered by itself or the row of an object above it.
    const leaves = [...paths].filter((p) => ![...paths].some((q) => q.startsWith(`${p}.`) || q.startsWith(`${p}[]`)))
    expect(leaves.filter((p) => !covered(p))).toEqual([])
  })

  it("names only keys the config file has", () => {
    const known = (key: string) => paths.has(key) || paths.has(key.replace(/\[\]$/, ""))
    expect([...fileKeys].filter((k) => !known(k))).toEqual([])
  })

  it("names only environment variables the sources read", () => {
    const text = sourceText()
    expect(envNames.size).toBeGreaterThan(8)
    expect([...envNames].filter((name) => !text.includes(name))).toEqual([])
  })
})
