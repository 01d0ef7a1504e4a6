/** /openapi.json (generated from the contract) and /healthz. */
import { Effect } from "effect"
import { HttpApiBuilder, OpenApi } from "effect/http-api"
import { PeriscopeApi } from "./Api.ts"

export const MetaHandlers = HttpApiBuilder.group(PeriscopeApi, "meta", (handlers) =>
  handlers.handle("openapi", () => Effect.sync(() => OpenApi.fromApi(PeriscopeApi) as unknown as Record<string, unknown>)))

export const HealthHandlers = HttpApiBuilder.group(PeriscopeApi, "health", (handlers) =>
  handlers.handle("healthz", () => Effect.succeed({ status: "ok" as const })))
