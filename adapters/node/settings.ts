/** Settings of the Node adapter: the shared loader over process.env and node:fs, paths resolved. */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { Effect } from "effect"
import { loadSettings as load, type ReadText, type Settings, SettingsError } from "../../core/config/Settings.ts"

export { SettingsError }
export type { Settings }

/** Reads a file, failing with the OS error code as the reason. */
export const readText: ReadText = (path) =>
  Effect.try({ try: () => readFileSync(path, "utf8"), catch: (e) => `cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` })

export const loadSettings: Effect.Effect<Settings, SettingsError> = Effect.map(load(readText), (s) => {
  const dataDir = resolve(s.dataDir)
  return {
    ...s,
    dataDir,
    search: { ...s.search, snapshot: resolve(s.search.snapshot ?? resolve(dataDir, "index.snapshot")) }
  }
})
