/**
 * Imports point down (docs/architecture.md): a room may import rooms below it,
 * never one above. The rule is read from the real import graph of core/ and
 * adapters/, so a new upward import fails here with the file that made it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")

/** Height of each room: higher rooms may import lower ones. */
const height: Record<string, number> = {
  adapters: 7,
  "core/app": 6,
  "core/config": 5,
  "core/api": 4,
  "core/backends": 4,
  "core/search": 3,
  "core/chat": 3,
  "core/auth": 3,
  "core/index": 2,
  "core/ingest": 2,
  "core/store": 2,
  "core/schema": 1,
  "core/jobs": 1
}

/** Imports between rooms of one height that the design allows: chat grounds answers in search; ingest makes the index's documents. */
const sideways = new Set(["core/chat -> core/search", "core/ingest -> core/index"])

const roomOf = (file: string): string => {
  const parts = relative(root, file).split("/")
  return parts[0] === "adapters" ? "adapters" : `${parts[0]}/${parts[1]}`
}

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : []
  })

/** Relative imports of a file (static `import ... from`, `export ... from` and `import()`), resolved to files. */
const importsOf = (file: string): Array<string> => {
  const text = readFileSync(file, "utf8")
  const found: Array<string> = []
  for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)) found.push(resolve(dirname(file), match[1]!))
  return found
}

export const edges = (): Array<{ readonly from: string; readonly to: string; readonly file: string; readonly target: string }> =>
  [...sources(join(root, "core")), ...sources(join(root, "adapters"))].flatMap((file) =>
    importsOf(file)
      .filter((target) => target.startsWith(join(root, "core")) || target.startsWith(join(root, "adapters")))
      .map((target) => ({ from: roomOf(file), to: roomOf(target), file: relative(root, file), target: relative(root, target) })))

describe("import direction", () => {
  it("knows every room of core/", () => {
    const rooms = readdirSync(join(root, "core")).filter((name) => statSync(join(root, "core", name)).isDirectory())
    for (const room of rooms) expect(height, `core/${room} needs a height in this test and a line in docs/architecture.md's layout`).toHaveProperty(`core/${room}`)
  })

  it("has no import from a lower room to a higher one, nor sideways unless allowed", () => {
    const wrong = edges()
      .filter(({ from, to }) => from !== to)
      .filter(({ from, to }) => height[to]! > height[from]! || (height[to] === height[from] && !sideways.has(`${from} -> ${to}`)))
      .map(({ file, target }) => `${file} -> ${target}`)
    expect(wrong).toEqual([])
  })

  it("has no circle of files: a module never needs, through others, the module that needs it", () => {
    const next = new Map<string, Array<string>>()
    for (const { file, target } of edges()) next.set(file, [...(next.get(file) ?? []), target])
    const circles: Array<string> = []
    const state = new Map<string, "open" | "done">()
    const visit = (file: string, path: Array<string>): void => {
      state.set(file, "open")
      for (const target of next.get(file) ?? []) {
        if (state.get(target) === "open") circles.push([...path.slice(path.indexOf(target)), target].join(" -> "))
        else if (state.get(target) === undefined) visit(target, [...path, target])
      }
      state.set(file, "done")
    }
    for (const file of next.keys()) if (state.get(file) === undefined) visit(file, [file])
    expect(circles).toEqual([])
  })

  it("sees the imports it judges (the graph is not empty)", () => {
    const all = edges()
    expect(all.length).toBeGreaterThan(100)
    expect(all.some(({ from, to }) => from === "core/api" && to === "core/chat")).toBe(true)
  })
})
