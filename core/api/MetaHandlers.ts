/** /openapi.json (generated from the contract), /healthz (liveness), /readyz (readiness) and /version. */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder, OpenApi } from "effect/http-api"
import { PeriscopeApi } from "./Api.ts"
import { BuildInfo, Readiness } from "./Readiness.ts"

export const MetaHandlers = HttpApiBuilder.group(PeriscopeApi, "meta", (handlers) =>
  handlers.handle("openapi", () => Effect.sync(() => OpenApi.fromApi(PeriscopeApi) as unknown as Record<string, unknown>)))

const version = OpenApi.fromApi(PeriscopeApi).info.version

export const HealthHandlers = HttpApiBuilder.group(PeriscopeApi, "health", Effect.fnUntraced(function*(handlers) {
  const readiness = yield* Readiness
  const build = yield* BuildInfo
  return handlers
    .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
    .handleRaw("readyz", () =>
      Effect.map(readiness.report, (report) =>
        HttpServerResponse.jsonUnsafe(
          { status: report.ready ? "ready" : "not_ready", checks: report.checks },
          { status: report.ready ? 200 : 503, headers: { "cache-control": "no-store" } }
        )))
    .handle("version", () => Effect.succeed({ name: "periscope", version, commit: build.commit ?? null }))
}))
