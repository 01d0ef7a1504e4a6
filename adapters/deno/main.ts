/**
 * Periscope on Deno and Deno Deploy: the application the other adapters
 * build (core/app), served by Deno.serve through the shared web handler.
 * Settings come from the environment (and the config file, when
 * PERISCOPE_CONFIG names one bundled with the deployment).
 *
 * Permissions: --allow-net (serve, a snapshot URL, model upstreams), --allow-env
 * (settings), --allow-read (config, keys and snapshot files). Deno Deploy grants these.
 * Search: the engine over the snapshot named by search.snapshot in the config file
 * (a path bundled with the deployment, or an http(s) URL); without one, the
 * fixture backend over Periscope's own sample documents.
 * Deno keeps no data directory, so a key must be configured: PERISCOPE_API_KEYS
 * or PERISCOPE_KEYS_FILE.
 */
import { ConfigProvider, Effect, FileSystem, Layer, PlatformError } from "effect"
import { FetchHttpClient } from "effect/http"
import { makeWebHandler } from "../../core/api/HttpApp.ts"
import { appLayer } from "../../core/app/Application.ts"
import { setupKeys } from "../../core/app/KeySetup.ts"
import { searchChoiceOf } from "../../core/app/SearchBackend.ts"
import { loadSettings } from "../../core/config/Settings.ts"
import { PageFetcher } from "../../core/ingest/crawl/PageFetcher.ts"
import { JobWorkers } from "../../core/jobs/JobRunner.ts"
import { denoJobWorkers } from "./denoJobWorkers.ts"

/** Deno's file reads as Effect's FileSystem: all the application reads is config, keys and snapshot files. */
const denoError = (method: string, path: string) => (cause: unknown) =>
  PlatformError.systemError({
    _tag: cause instanceof Deno.errors.NotFound ? "NotFound" : cause instanceof Deno.errors.PermissionDenied ? "PermissionDenied" : "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor: path,
    cause: { code: cause instanceof Error ? cause.name : String(cause) }
  })

const denoFileSystem = FileSystem.layerNoop({
  readFile: (path) => Effect.tryPromise({ try: () => Deno.readFile(path), catch: denoError("readFile", path) }),
  readFileString: (path) => Effect.tryPromise({ try: () => Deno.readTextFile(path), catch: denoError("readFileString", path) }),
  exists: (path) => Effect.promise(() => Deno.stat(path).then(() => true, () => false))
})

// webFetch on fetch: private addresses refused by name and literal (PageFetcher.layerFetch says what that misses);
// pages read on Web Workers where the runtime has them (denoJobWorkers.ts).
const platform = Layer.mergeAll(denoFileSystem, FetchHttpClient.layer, PageFetcher.layerFetch(), Layer.succeed(JobWorkers, denoJobWorkers))

const startup = Effect.gen(function*() {
  const settings = yield* loadSettings
  const keys = yield* setupKeys(settings, "refuse")
  const services = appLayer(settings, keys.records, { search: searchChoiceOf(settings.search, undefined) })
  return { settings, services: Layer.provide(services, platform) }
}).pipe(
  Effect.provide(platform),
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: Deno.env.toObject() }))
)

const started = await Effect.runPromise(Effect.result(startup))
if (started._tag === "Failure") {
  console.error(`Invalid configuration: ${started.failure.setting}: ${started.failure.message}`)
  Deno.exit(1)
}
const { settings, services } = started.success
const { handler } = makeWebHandler(services)
// The services are built on the first request: make it now, so a bad setting (a missing upstream
// key variable, an unreadable snapshot) stops the start instead of failing a caller.
await handler(new Request("http://localhost/healthz")).catch((error) => {
  console.error(`Invalid configuration: ${error?.setting ?? "startup"}: ${error?.message ?? String(error)}`)
  Deno.exit(1)
})

Deno.serve({
  port: settings.port,
  hostname: settings.host ?? "0.0.0.0",
  onListen: ({ hostname, port }) => console.log(`Periscope (Deno) listening on http://${hostname}:${port}`)
}, (request) => handler(request))
