/**
 * Periscope's HTTP server on Node over services already built: a GatedServer
 * with the express lane in front for the hot routes (core/api/ExpressLane.ts)
 * and the full route stack (PeriscopeRoutes on Effect's NodeHttpServer) for
 * everything else. `npm start` and the tests' in-process servers both start
 * it here, so tests exercise the server users run.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, type Scope } from "effect"
import { HttpRouter } from "effect/http"
import { makeExpressLane } from "../../core/api/ExpressLane.ts"
import type { AppServices } from "../../core/api/HttpApp.ts"
import { PeriscopeRoutes } from "../../core/api/HttpApp.ts"
import { ServerLifecycle, type ServerLifecycleShape } from "../../core/api/ServerOptions.ts"
import { GatedServer } from "./GatedServer.ts"

export interface NodeServerOptions {
  readonly port: number
  /** Undefined: every interface, as node:http listens by default. */
  readonly host: string | undefined
  /** Effect's own request log line (the access log is RequestTelemetry's, either way). */
  readonly logRequests?: boolean
  readonly headersTimeoutMs?: number
  readonly requestTimeoutMs?: number
  readonly keepAliveTimeoutMs?: number
  /** How open chat streams learn of a shutdown. */
  readonly lifecycle?: ServerLifecycleShape
  /** False: every route through the full stack (the express lane's comparison tests). Default true. */
  readonly expressLane?: boolean
}

/** Starts listening; the server closes with the scope. */
export const startNodeServer = (context: Context.Context<AppServices>, options: NodeServerOptions): Effect.Effect<GatedServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const httpServer = new GatedServer(options)
    // Node enforces headersTimeout and requestTimeout only when it checks its connections, every 30 s by
    // default: a slowloris connection then lived up to 45 s instead of 15 (test/fault/slowloris.e2e.test.ts).
    Object.assign(httpServer, { connectionsCheckingInterval: 1_000 }) // read when the server starts listening; not in the types
    const served = options.lifecycle === undefined ? context : Context.add(context, ServerLifecycle, options.lifecycle)
    if (options.expressLane !== false) httpServer.lane = yield* Effect.provideContext(makeExpressLane, served)
    const routes = HttpRouter.serve(PeriscopeRoutes, { disableLogger: options.logRequests !== true, disableListenLog: true }).pipe(
      Layer.provide(Layer.succeedContext(served)),
      // The drain of `npm start` waits for requests in flight first; the server's own wait is only for stragglers.
      Layer.provide(NodeHttpServer.layer(() => httpServer, { port: options.port, ...(options.host === undefined ? {} : { host: options.host }), gracefulShutdownTimeout: "1 second" }))
    )
    yield* Layer.build(routes).pipe(Effect.orDie)
    return httpServer
  })
