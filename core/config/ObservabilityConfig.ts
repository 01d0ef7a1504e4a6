/**
 * The `observability` section of the config file: the Prometheus scrape
 * endpoint and OpenTelemetry traces. Access logs stay behind `logRequests`.
 */
import { Schema } from "effect"
import { DEFAULT_TRACE_SAMPLE_RATIO } from "../api/RequestTelemetry.ts"
import { ruledNumber, ruledString } from "../schema/Rules.ts"

const optionalKey = Schema.optionalKey
const urlRule = "must be an http(s) URL"
const nameRule = "must be 1 to 64 letters, digits or _ . -"
const ratioRule = "must be a number from 0 to 1"

export const ObservabilityConfig = Schema.Struct({
  metrics: optionalKey(Schema.Struct({
    /** Serve GET /metrics. Default true. */
    enabled: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
    /** Serve it without an API key (for a scraper on a private network). Default false. */
    public: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" }))
  }).annotate({ message: "must be an object {enabled?, public?}" })),
  /** OTLP/HTTP base URL of a collector (http://host:4318); traces go to <url>/v1/traces. OTEL_EXPORTER_OTLP_ENDPOINT wins. */
  otlpEndpoint: optionalKey(ruledString(urlRule).check(Schema.isPattern(/^https?:\/\/[^\s/]+/i, { message: urlRule }))),
  /** service.name of the traces. Default "periscope"; OTEL_SERVICE_NAME wins. */
  serviceName: optionalKey(ruledString(nameRule).check(Schema.isPattern(/^[A-Za-z0-9_.-]{1,64}$/, { message: nameRule }))),
  /** Share of requests without a caller's traceparent that are traced (0 to 1). Default 0.01; a caller's sampled flag always wins. */
  traceSampleRatio: optionalKey(ruledNumber(ratioRule, { min: 0, max: 1 }))
}).annotate({ message: "must be an object {metrics?, otlpEndpoint?, serviceName?, traceSampleRatio?}" })
export type ObservabilityConfig = typeof ObservabilityConfig.Type

export interface ObservabilitySettings {
  readonly metrics: boolean
  readonly metricsPublic: boolean
  /** Base URL of the OTLP/HTTP collector; undefined: no traces exported. */
  readonly otlpEndpoint: string | undefined
  readonly serviceName: string
  /** Parent-based sampling: a caller's traceparent decides; requests without one are traced with this probability. */
  readonly traceSampleRatio: number
}

export const observabilitySettingsOf = (
  file: ObservabilityConfig | undefined,
  env: { readonly otlpEndpoint?: string | undefined; readonly serviceName?: string | undefined } = {}
): ObservabilitySettings => ({
  metrics: file?.metrics?.enabled ?? true,
  metricsPublic: file?.metrics?.public ?? false,
  otlpEndpoint: env.otlpEndpoint ?? file?.otlpEndpoint,
  serviceName: env.serviceName ?? file?.serviceName ?? "periscope",
  traceSampleRatio: file?.traceSampleRatio ?? DEFAULT_TRACE_SAMPLE_RATIO
})
