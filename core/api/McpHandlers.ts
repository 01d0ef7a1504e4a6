/** POST /mcp in the HttpApi contract: the admitted caller's message answered by the application's McpEndpoint. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Admission, CurrentPrincipal } from "./Admission.ts"
import { errorAnswer, toHttpResponse } from "./Answer.ts"
import { PeriscopeApi } from "./Api.ts"
import { MCP_BODY_LIMIT, readJsonText } from "./JsonBody.ts"
import { McpEndpoint } from "./mcp/McpEndpoint.ts"

export const McpHandlers = HttpApiBuilder.group(PeriscopeApi, "mcp", Effect.fnUntraced(function*(handlers) {
  const endpoint = yield* McpEndpoint
  const admission = yield* Admission
  return handlers.handleRaw("mcp", ({ request }) =>
    Effect.flatMap(Effect.service(CurrentPrincipal), (principal) =>
      readJsonText(request, MCP_BODY_LIMIT).pipe(
        Effect.matchEffect({
          onFailure: (error) => Effect.succeed(errorAnswer("mcp", error)),
          onSuccess: (body) => endpoint.answerHttp(body, request, principal, admission.charge(principal))
        }),
        Effect.map(toHttpResponse)
      )))
}))
