/** Settings of the Node adapter: the shared loader over process.env and the Node file system, paths resolved. */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect } from "effect"
import { loadSettings as load, type Settings, SettingsError } from "../../core/config/Settings.ts"

export { SettingsError }
export type { Settings }

/** Reads a file, failing with the OS error code as the reason (for the JSONL documents reader). */
export const readText = (path: string): Effect.Effect<string, string> =>
  Effect.try({ try: () => readFileSync(path, "utf8"), catch: (e) => `cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` })

export const loadSettings: Effect.Effect<Settings, SettingsError> = load.pipe(
  Effect.map((s) => {
    const dataDir = resolve(s.dataDir)
    return { ...s, dataDir, search: { ...s.search, snapshot: resolve(s.search.snapshot ?? resolve(dataDir, "index.snapshot")) } }
  }),
  Effect.provide(NodeFileSystem.layer)
)
