/**
 * `npm start`: the Periscope HTTP server on Node. Reads settings, prepares
 * keys, builds the backends and serves until SIGINT/SIGTERM, then stops
 * accepting connections and lets in-flight requests finish.
 */
import { createServer, type Server } from "node:http"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { PeriscopeRoutes } from "../../core/api/HttpApp.ts"
import { appLayer } from "../../core/app/Application.ts"
import { setupKeys } from "../../core/app/KeySetup.ts"
import { searchChoiceOf } from "../../core/app/SearchBackend.ts"
import { nodeEngineHooks, nodePlatform } from "./platform.ts"
import { loadSettings } from "./settings.ts"

const announceKey = (key: string, file: string) =>
  Effect.sync(() => {
    // The one time this key is shown: only its hash is stored.
    process.stdout.write(
      `\nNo API key was configured, so Periscope made one. It is shown only now:\n\n    ${key}\n\n` +
        `Its SHA-256 is kept in ${file}. Send it as "Authorization: Bearer <key>".\n` +
        `Set PERISCOPE_API_KEYS or PERISCOPE_KEYS_FILE to use your own keys.\n\n`
    )
  })

/**
 * On SIGTERM/SIGINT the server stops listening and waits for requests in
 * flight; connections left idle by a finished request are closed at once
 * instead of after their keep-alive timeout.
 */
const closeIdleConnectionsOnShutdown = (server: Server) => {
  const onSignal = () => setInterval(() => server.closeIdleConnections(), 50).unref()
  process.once("SIGTERM", onSignal)
  process.once("SIGINT", onSignal)
}

const program = Effect.gen(function*() {
  const settings = yield* loadSettings
  const keys = yield* Effect.provide(setupKeys(settings, "persist"), nodePlatform)
  if (keys.generatedKey !== undefined) yield* announceKey(keys.generatedKey, keys.generatedFile!)
  const services = appLayer(settings, keys.records, {
    search: searchChoiceOf(settings.search, settings.search.snapshot),
    hooks: nodeEngineHooks(settings)
  }).pipe(Layer.provide(nodePlatform))
  const httpServer = createServer()
  closeIdleConnectionsOnShutdown(httpServer)
  const server = HttpRouter.serve(PeriscopeRoutes, { disableLogger: !settings.logRequests }).pipe(
    Layer.provide(services),
    Layer.provide(NodeHttpServer.layer(() => httpServer, { port: settings.port, host: settings.host }))
  )
  yield* Effect.logInfo(`Periscope starting on port ${settings.port} (data in ${settings.dataDir})`)
  return yield* Layer.launch(server)
}).pipe(
  Effect.catchTag("SettingsError", (error) =>
    Effect.sync(() => {
      process.stderr.write(`Invalid configuration: ${error.setting}: ${error.message}\n`)
      process.exitCode = 1
    }))
)

// A shutdown on request (interruption by SIGTERM/SIGINT) is a clean exit.
NodeRuntime.runMain(program, {
  teardown: (exit, onExit) =>
    onExit(Exit.isSuccess(exit) ? Number(process.exitCode ?? 0) : Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
})
