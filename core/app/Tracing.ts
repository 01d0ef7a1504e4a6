/**
 * OpenTelemetry traces over OTLP/HTTP (JSON) when a collector is configured
 * (observability.otlpEndpoint or OTEL_EXPORTER_OTLP_ENDPOINT): effect's
 * OtlpTracer batches spans and posts them to <endpoint>/v1/traces through the
 * platform's HttpClient, with tracing turned off for its own requests. The
 * request middleware puts this tracer under every request; without an
 * endpoint nothing is exported and the request path stays as it was.
 */
import { Duration, Layer } from "effect"
import type { HttpClient } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"
import type { ObservabilitySettings } from "../config/ObservabilityConfig.ts"

export const tracesUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, "")}/v1/traces`

export const tracingLayer = (
  observability: ObservabilitySettings,
  serviceVersion: string,
  options: { readonly exportInterval?: Duration.Input } = {}
): Layer.Layer<never, never, HttpClient.HttpClient> =>
  observability.otlpEndpoint === undefined
    ? Layer.empty
    : OtlpTracer.layer({
      url: tracesUrl(observability.otlpEndpoint),
      resource: { serviceName: observability.serviceName, serviceVersion },
      exportInterval: options.exportInterval ?? Duration.seconds(2),
      shutdownTimeout: Duration.seconds(3)
    }).pipe(Layer.provide(OtlpSerialization.layerJson))
