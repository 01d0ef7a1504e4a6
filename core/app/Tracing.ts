/**
 * OpenTelemetry traces over OTLP/HTTP (JSON) when a collector is configured
 * (observability.otlpEndpoint or OTEL_EXPORTER_OTLP_ENDPOINT): effect's
 * OtlpTracer batches spans and posts them to <endpoint>/v1/traces through the
 * platform's HttpClient, with tracing turned off for its own requests. The
 * request middleware puts this tracer under the requests it samples; without
 * an endpoint nothing is exported and the request path stays as it was.
 * Effect's own server span (HttpRouter.serve's tracer middleware, named by the
 * method alone, made for every request whatever the sampling) is turned off:
 * RequestTelemetry makes the server span, named by the route.
 * Tracing is off everywhere by default: spans (core/store/Spans.ts) and the HTTP
 * client's client spans and traceparent are skipped, not made and dropped; with
 * a collector, RequestTelemetry turns it on for the requests it samples
 * (core/api/SampledTracing.ts).
 */
import { Duration, Layer, References, Tracer } from "effect"
import { type HttpClient, HttpMiddleware } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"
import type { ObservabilitySettings } from "../config/ObservabilityConfig.ts"

export const tracesUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, "")}/v1/traces`

const serverSpanOff = Layer.succeed(HttpMiddleware.TracerDisabledWhen)(() => true)

const tracingOff = Layer.mergeAll(serverSpanOff, Layer.succeed(References.TracerEnabled)(false), Layer.succeed(Tracer.DisablePropagation)(true))

export const tracingLayer = (
  observability: ObservabilitySettings,
  serviceVersion: string,
  options: { readonly exportInterval?: Duration.Input } = {}
): Layer.Layer<never, never, HttpClient.HttpClient> =>
  observability.otlpEndpoint === undefined
    ? tracingOff
    : Layer.merge(tracingOff, OtlpTracer.layer({
      url: tracesUrl(observability.otlpEndpoint),
      resource: { serviceName: observability.serviceName, serviceVersion },
      exportInterval: options.exportInterval ?? Duration.seconds(2),
      shutdownTimeout: Duration.seconds(3)
    }).pipe(Layer.provide(OtlpSerialization.layerJson)))
