/**
 * The search backend of the Node server. "engine" (the default) serves the
 * snapshot in the data directory; when there is none yet, the first start
 * builds the starter index from the documentation in node_modules. SIGHUP
 * reloads the snapshot file in place: the new index is swapped in
 * atomically, queries in flight finish on the old one, a bad file is
 * refused and the old index stays. "fixture" serves JSONL documents by
 * term overlap.
 */
import { resolve } from "node:path"
import { Effect, Layer } from "effect"
import { EngineSearch, SearchEngine } from "../../core/backends/EngineSearch.ts"
import { FixtureSearchLayer } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import type { ImageSearch } from "../../core/search/ImageSearch.ts"
import type { WebSearch } from "../../core/search/WebSearch.ts"
import { readJsonlDocuments } from "./jsonlDocuments.ts"
import { type Settings, SettingsError } from "./settings.ts"
import { loadSnapshotFile, readSnapshotFile } from "./snapshotFile.ts"
import { ensureStarterIndex } from "./starterIndex.ts"

/** Reloads the snapshot on SIGHUP, logging what was loaded or why it was refused. */
const reloadOnSighup = (path: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const engine = yield* SearchEngine
    const reload = readSnapshotFile(path).pipe(
      Effect.flatMap(engine.reload),
      Effect.flatMap((summary) => Effect.logInfo(`SIGHUP: reloaded ${path}: ${summary.documents} documents, ${summary.images} images`)),
      Effect.catch((error) => Effect.logError(`SIGHUP: kept the current index; ${path} was refused: ${error.message}`))
    )
    const onHup = () => void Effect.runFork(reload)
    yield* Effect.acquireRelease(
      Effect.sync(() => process.on("SIGHUP", onHup)),
      () => Effect.sync(() => process.off("SIGHUP", onHup))
    )
  }))

const engineLayer = (settings: Settings): Layer.Layer<WebSearch | ImageSearch | SearchEngine, SettingsError> => {
  const path = settings.search.snapshot!
  const setting = `search.snapshot (${path})`
  const prepare = ensureStarterIndex({ dataDir: settings.dataDir, out: path, nodeModules: resolve("node_modules") }).pipe(
    Effect.flatMap((built) => (built === undefined ? Effect.void : Effect.logInfo(built.message))),
    Effect.mapError((error) => new SettingsError({ setting, message: `no snapshot, and the starter index could not be built: ${error.message}` }))
  )
  const load = Effect.andThen(
    prepare,
    loadSnapshotFile(path).pipe(
      Effect.mapError((error) =>
        new SettingsError({
          setting,
          message: error._tag === "SnapshotError" ? `${error.message}; rebuild it with \`npm run index -- <sources>\`` : error.message
        }))
    )
  )
  const engine = Layer.unwrap(Effect.map(load, EngineSearch.layer))
  return Layer.merge(engine, reloadOnSighup(path).pipe(Layer.provide(engine)))
}

export const searchLayer = (settings: Settings): Layer.Layer<WebSearch | ImageSearch, SettingsError> => {
  if (settings.search.backend === "engine") return engineLayer(settings)
  return settings.search.documents === undefined
    ? FixtureSearchLayer(sampleDocuments)
    : Layer.unwrap(Effect.map(readJsonlDocuments(settings.search.documents, "search.documents"), FixtureSearchLayer))
}
