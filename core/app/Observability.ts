/**
 * The observability settings turned into Layers: the request middleware's
 * options (metrics, access log), the OTLP tracer when a collector is
 * configured, and what /readyz checks (the index loaded; the shared store
 * reachable when Redis is configured).
 */
import { Effect, Layer } from "effect"
import { OpenApi } from "effect/http-api"
import { PeriscopeApi } from "../api/Api.ts"
import { Readiness } from "../api/Readiness.ts"
import { TelemetryOptions } from "../api/RequestTelemetry.ts"
import type { Settings } from "../config/Settings.ts"
import { SharedStore } from "../store/SharedStore.ts"
import { IndexStatus } from "./IndexStatus.ts"
import { tracingLayer } from "./Tracing.ts"

/** The version the contract states (one place: the HttpApi's OpenAPI annotation). */
export const serviceVersion: string = OpenApi.fromApi(PeriscopeApi).info.version

const readinessLayer = Layer.effect(
  Readiness,
  Effect.gen(function*() {
    const index = yield* IndexStatus
    const store = yield* SharedStore
    return Readiness.make([
      {
        name: "index",
        check: Effect.flatMap(index.current, (current) => {
          if (current !== undefined) return Effect.succeed(`${current.documents} documents, ${current.images} images`)
          return index.expectsSnapshot ? Effect.fail("the index is not loaded yet") : Effect.succeed("no snapshot to load (documents in memory)")
        })
      },
      {
        name: "store",
        check: store.check.pipe(
          Effect.as(store.kind === "redis" ? "redis reachable" : "memory (this instance only)"),
          Effect.mapError((error) => error.message)
        )
      }
    ])
  })
)

export const observabilityLayer = (settings: Settings) =>
  Layer.mergeAll(
    readinessLayer,
    Layer.succeed(TelemetryOptions, {
      accessLog: settings.logRequests,
      metrics: settings.observability.metrics,
      metricsPublic: settings.observability.metricsPublic,
      traceSampleRatio: settings.observability.traceSampleRatio
    }),
    tracingLayer(settings.observability, serviceVersion)
  )
