/**
 * Periscope on Deno and Deno Deploy: the same web handler as every adapter,
 * served by Deno.serve. Settings come from the environment (and the config
 * file, when PERISCOPE_CONFIG names one bundled with the deployment).
 *
 * Permissions: --allow-net (serve, a snapshot URL, model upstreams), --allow-env
 * (settings), --allow-read (config, keys and snapshot files). Deno Deploy grants these.
 * Search: the engine over the snapshot named by search.snapshot in the config file
 * (a path bundled with the deployment, or an http(s) URL); without one, the
 * fixture backend over Periscope's own sample documents.
 * Deno keeps no data directory, so a key must be configured: PERISCOPE_API_KEYS
 * or PERISCOPE_KEYS_FILE.
 */
import { ConfigProvider, Duration, Effect, Layer } from "effect"
import { makeWebHandler } from "../../core/api/HttpApp.ts"
import { decoderFor } from "../../core/schema/Decode.ts"
import { ServerOptions } from "../../core/api/ServerOptions.ts"
import { ApiKeys } from "../../core/auth/ApiKeys.ts"
import { KeysFile, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { RateLimiter } from "../../core/auth/RateLimiter.ts"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { FixtureSearchLayer } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { OpenAiUpstream } from "../../core/backends/openai/OpenAiUpstream.ts"
import { chatGatewayLayer } from "../../core/chat/ChatSetup.ts"
import { decodeSnapshot } from "../../core/index/Snapshot.ts"
import { loadSettings, readJsonFile, type ReadText, SettingsError } from "../../core/config/Settings.ts"

const readText: ReadText = (path) =>
  Effect.tryPromise({ try: () => Deno.readTextFile(path), catch: (e) => `cannot be read: ${e instanceof Error ? e.name : String(e)}` })

const decodeKeysFile = decoderFor(KeysFile, "file")

/** Snapshot bytes from a bundled file or a URL. */
const readSnapshot = (location: string): Effect.Effect<Uint8Array, SettingsError> => {
  const setting = `search.snapshot (${location})`
  const read = /^https?:\/\//.test(location)
    ? Effect.tryPromise({
      try: async () => {
        const response = await fetch(location)
        if (!response.ok) throw new Error(`HTTP ${response.status}`)
        return new Uint8Array(await response.arrayBuffer())
      },
      catch: (e) => new SettingsError({ setting, message: `cannot be fetched: ${e instanceof Error ? e.message : String(e)}` })
    })
    : Effect.mapError(Effect.tryPromise(() => Deno.readFile(location)), (e) =>
      new SettingsError({ setting, message: `cannot be read: ${e.cause instanceof Error ? e.cause.name : String(e)}` }))
  return read
}

const searchLayer = (search: { readonly backend: string; readonly snapshot: string | undefined }) =>
  Effect.gen(function*() {
    if (search.backend === "engine" && search.snapshot !== undefined) {
      const bytes = yield* readSnapshot(search.snapshot)
      const index = yield* Effect.try({
        try: () => decodeSnapshot(bytes),
        catch: (e) => new SettingsError({ setting: `search.snapshot (${search.snapshot})`, message: e instanceof Error ? e.message : String(e) })
      })
      console.log(`Serving ${index.documentCount} documents and ${index.imageCount} images from ${search.snapshot}`)
      return EngineSearch.layer(index)
    }
    console.log("No search.snapshot configured: serving the sample documents (fixture backend)")
    return FixtureSearchLayer(sampleDocuments)
  })

const startup = Effect.gen(function*() {
  const settings = yield* loadSettings(readText)
  const records = recordsFromPlainKeys(settings.apiKeys, settings.rateLimitPerMinute)
  if (settings.keysFile !== undefined) {
    records.push(...(yield* readJsonFile(readText, settings.keysFile, "PERISCOPE_KEYS_FILE", decodeKeysFile)).keys)
  }
  if (records.length === 0) {
    return yield* new SettingsError({
      setting: "PERISCOPE_API_KEYS",
      message: "is required on Deno (or PERISCOPE_KEYS_FILE): there is no data directory to keep a generated key in"
    })
  }
  const search = yield* searchLayer(settings.search)
  const services = Layer.mergeAll(
    search,
    chatGatewayLayer(settings.file.chat).pipe(Layer.provide([search, OpenAiUpstream.fetchLayer])),
    ApiKeys.layer(records),
    RateLimiter.layer,
    Layer.succeed(ServerOptions, { streamKeepAlive: Duration.seconds(settings.streamKeepAliveSeconds) })
  )
  return { settings, services }
}).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: Deno.env.toObject() })))

const started = await Effect.runPromise(Effect.result(startup))
if (started._tag === "Failure") {
  console.error(`Invalid configuration: ${started.failure.setting}: ${started.failure.message}`)
  Deno.exit(1)
}
const { settings, services } = started.success
const { handler } = makeWebHandler(services)
// A bad setting found while building the services (a missing upstream key variable) fails the first request; check it now.
await handler(new Request("http://localhost/healthz")).catch((error) => {
  console.error(`Invalid configuration: ${error?.setting ?? "chat"}: ${error?.message ?? String(error)}`)
  Deno.exit(1)
})

Deno.serve({
  port: settings.port,
  hostname: settings.host ?? "0.0.0.0",
  onListen: ({ hostname, port }) => console.log(`Periscope (Deno) listening on http://${hostname}:${port}`)
}, (request) => handler(request))
