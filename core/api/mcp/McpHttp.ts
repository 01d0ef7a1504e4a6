/**
 * MCP's Streamable HTTP transport at POST /mcp, stateless: no Mcp-Session-Id
 * is issued, so every instance answers every message. A request is answered
 * as JSON, or as server-sent events when it asked for progress and the client
 * accepts them; notifications and responses alone get 202. The caller was
 * admitted (key, body head) before; each tool call is charged to the key here.
 * Browsers are held off by the Origin check the protocol asks for (DNS
 * rebinding): an Origin is accepted when configured, or when it names the
 * server's own loopback or IP address.
 */
import { Effect, Queue, Stream } from "effect"
import type { Principal } from "../../auth/AuthError.ts"
import { type Answer, jsonAnswer, SSE_CONTENT_TYPE } from "../Answer.ts"
import type { ApiError } from "../ApiError.ts"
import type { RequestHead } from "../RequestTelemetry.ts"
import {
  type Answered,
  classify,
  DEFAULT_HTTP_VERSION,
  type Incoming,
  INVALID_REQUEST,
  isSupportedVersion,
  type JsonRpcNotification,
  type JsonRpcResponse,
  type McpCaller,
  type McpDispatcher,
  PARSE_ERROR,
  REQUEST_CANCELLED,
  rpcError
} from "./McpProtocol.ts"

export interface McpHttpOptions {
  /** Origins (scheme://host[:port]) browsers may call /mcp from, besides the server's own loopback or IP address. */
  readonly allowedOrigins: ReadonlyArray<string>
}

const encoder = new TextEncoder()
const sseEvent = (message: unknown) => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`)
const accepted = (): Answer => ({ _tag: "Json", status: 202, headers: {}, body: "" })
const refused = (status: number, code: number, message: string): Answer => jsonAnswer(rpcError(null, code, message), status)

/** An IP literal or localhost cannot be rebound to another address by DNS. */
const isAddressHost = (hostname: string) =>
  hostname === "localhost" || hostname.endsWith(".localhost") || /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname) || hostname.startsWith("[")

const originAllowed = (origin: string | undefined, host: string | undefined, allowed: ReadonlyArray<string>): boolean => {
  if (origin === undefined) return true
  if (allowed.includes(origin)) return true
  try {
    const url = new URL(origin)
    return host !== undefined && url.host === host.toLowerCase() && isAddressHost(url.hostname)
  } catch {
    return false
  }
}

/** The media types of an Accept header, without parameters. */
const acceptedTypes = (accept: string | undefined): ReadonlyArray<string> =>
  accept === undefined ? ["*/*"] : accept.split(",").map((part) => part.split(";")[0]!.trim().toLowerCase())

export const makeMcpHttpAnswer = (dispatcher: McpDispatcher<never>, options: McpHttpOptions) =>
(body: string, request: RequestHead, principal: Principal, charge: Effect.Effect<void, ApiError>): Effect.Effect<Answer> => {
  const headers = request.headers
  if (!originAllowed(headers["origin"], headers["host"], options.allowedOrigins)) {
    return Effect.succeed(refused(403, INVALID_REQUEST, `Origin ${JSON.stringify(headers["origin"])} is not allowed to call /mcp (set mcp.allowedOrigins)`))
  }
  const types = acceptedTypes(headers["accept"])
  const acceptsJson = types.some((t) => t === "application/json" || t === "application/*" || t === "*/*")
  const acceptsEvents = types.some((t) => t === SSE_CONTENT_TYPE || t === "text/*" || t === "*/*")
  if (!acceptsJson && !acceptsEvents) {
    return Effect.succeed(refused(406, INVALID_REQUEST, "Accept: must include application/json and text/event-stream"))
  }
  const version = headers["mcp-protocol-version"]
  if (version !== undefined && !isSupportedVersion(version)) {
    return Effect.succeed(refused(400, INVALID_REQUEST, `MCP-Protocol-Version: ${JSON.stringify(version)} is not supported`))
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch (error) {
    return Effect.succeed(refused(400, PARSE_ERROR, `Parse error: ${error instanceof Error ? error.message : "the body is not JSON"}`))
  }
  // Batches are part of the 2025-03-26 revision only; later ones send one message per request.
  const batch = Array.isArray(parsed)
  if (batch && (parsed as Array<unknown>).length === 0) return Effect.succeed(refused(400, INVALID_REQUEST, "Invalid Request: an empty batch"))
  if (batch && (version ?? DEFAULT_HTTP_VERSION) !== DEFAULT_HTTP_VERSION) {
    return Effect.succeed(refused(400, INVALID_REQUEST, `Invalid Request: batches are not part of protocol version ${version}`))
  }
  const messages = (batch ? parsed as Array<unknown> : [parsed]).map(classify)
  const requests = messages.filter((m): m is Extract<Incoming, { _tag: "Request" | "Invalid" }> => m._tag === "Request" || m._tag === "Invalid")
  const caller = (notify: McpCaller["notify"]): McpCaller => ({ id: principal.keyName, notify, charge })
  const notifications = Effect.forEach(messages, (m) => m._tag === "Notification" ? dispatcher.notification(m, caller(undefined)) : Effect.void, { discard: true })
  if (requests.length === 0) return Effect.as(notifications, accepted())

  const answerOne = (m: Extract<Incoming, { _tag: "Request" | "Invalid" }>, notify: McpCaller["notify"]): Effect.Effect<Answered> =>
    m._tag === "Invalid" ? Effect.succeed(rpcError(m.id, INVALID_REQUEST, m.message)) : dispatcher.request(m, caller(notify))
  // One message (every revision after 2025-03-26) is answered without a fiber per message.
  const answerAll = (notify: McpCaller["notify"]): Effect.Effect<ReadonlyArray<Answered>> =>
    !batch
      ? Effect.map(answerOne(requests[0]!, notify), (answer) => [answer])
      : Effect.andThen(notifications, Effect.forEach(requests, (m) => answerOne(m, notify), { concurrency: "unbounded" }))
  const wantsProgress = requests.some((m) => m._tag === "Request" && m.method === "tools/call" && hasProgressToken(m.params))
  if (acceptsJson && !(acceptsEvents && wantsProgress)) {
    return Effect.map(answerAll(undefined), (answers) => {
      const responses = answers.map((answer, i) => answer === "cancelled" ? rpcError(idOf(requests[i]!), REQUEST_CANCELLED, "Request cancelled") : answer)
      return jsonAnswer(batch ? responses : responses[0])
    })
  }
  // Progress first, then the responses; a cancelled call's stream ends without one.
  const events = Stream.callback<Uint8Array>((queue) =>
    Effect.forkScoped(
      answerAll((notification: JsonRpcNotification) => Effect.asVoid(Queue.offer(queue, sseEvent(notification)))).pipe(
        Effect.flatMap((answers) => {
          const responses = answers.filter((answer): answer is JsonRpcResponse => answer !== "cancelled")
          if (responses.length > 0) Queue.offerUnsafe(queue, sseEvent(batch ? responses : responses[0]))
          return Queue.end(queue)
        })
      )
    )
  )
  return Effect.succeed({ _tag: "Events", headers: { "cache-control": "no-cache" }, events })
}

const hasProgressToken = (params: Record<string, unknown> | undefined) => {
  const meta = params?._meta
  return typeof meta === "object" && meta !== null && "progressToken" in meta
}

const idOf = (message: Extract<Incoming, { _tag: "Request" | "Invalid" }>) => message.id
