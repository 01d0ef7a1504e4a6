/**
 * The MCP server of this application, built once from its services: the tool
 * dispatcher (McpProtocol over McpTools) and its Streamable HTTP face. The
 * HttpApi handler and the express lane answer /mcp with the same one, so a
 * cancellation finds its call whichever way the call came in; the stdio
 * command serves the same dispatcher.
 */
import { Context, Effect, Layer } from "effect"
import type { Principal } from "../../auth/AuthError.ts"
import type { Answer } from "../Answer.ts"
import type { ApiError } from "../ApiError.ts"
import type { RequestHead } from "../RequestTelemetry.ts"
import { makeMcpHttpAnswer, type McpHttpOptions } from "./McpHttp.ts"
import { makeMcpDispatcher, type McpDispatcher } from "./McpProtocol.ts"
import { makeMcpTools } from "./McpTools.ts"

export const SERVER_INFO = {
  name: "periscope",
  title: "Periscope",
  version: "0.1.0",
  instructions: "Periscope searches the web (its own index and configured live providers), reads pages and answers with sources. " +
    "Use web_search to find pages, web_fetch to read one, map_site to list a site's pages, image_search for images, and answer (when listed) for a cited answer."
}

export class McpEndpoint extends Context.Service<McpEndpoint, {
  readonly dispatcher: McpDispatcher<never>
  /** POST /mcp for an admitted caller; `charge` is one tool call against its key's limit. */
  readonly answerHttp: (body: string, request: RequestHead, principal: Principal, charge: Effect.Effect<void, ApiError>) => Effect.Effect<Answer>
}>()("periscope/api/mcp/McpEndpoint") {
  static readonly layer = (options: McpHttpOptions) =>
    Layer.effect(
      McpEndpoint,
      Effect.map(makeMcpTools, (tools) => {
        const dispatcher = makeMcpDispatcher(SERVER_INFO, tools)
        return McpEndpoint.of({ dispatcher, answerHttp: makeMcpHttpAnswer(dispatcher, options) })
      })
    )
}
