/** Settings of the Node adapter: the shared loader over process.env and the Node file system, paths resolved. */
import { resolve } from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect } from "effect"
import { loadSettings as load, type Settings, SettingsError } from "../../core/config/Settings.ts"

export { SettingsError }
export type { Settings }

export const loadSettings: Effect.Effect<Settings, SettingsError> = load.pipe(
  Effect.map((s) => {
    const dataDir = resolve(s.dataDir)
    return { ...s, dataDir, search: { ...s.search, snapshot: resolve(s.search.snapshot ?? resolve(dataDir, "index.snapshot")) } }
  }),
  Effect.provide(NodeFileSystem.layer)
)
