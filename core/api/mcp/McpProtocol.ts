/**
 * The Model Context Protocol's server side for tools, over any transport:
 * one JSON-RPC message in, its response (if any) out, progress notifications
 * on the way. Stateless: nothing is kept between messages (initialize only
 * negotiates a version), so any instance answers any message and no session
 * outlives a request. A `notifications/cancelled` interrupts the call in flight
 * on the instance that runs it, found by the caller and the request id.
 * Transports: McpHttp (Streamable HTTP at /mcp) and the Node adapter's stdio.
 *
 * Effect's own McpServer keeps sessions in one process's memory over HTTP for
 * the protocol revisions today's clients speak, which fits neither Deno Deploy
 * nor several instances behind a load balancer: hence this small dispatcher.
 */
import { Cause, Effect, Exit, Fiber, Result } from "effect"
import type { InvalidInput } from "../../schema/InvalidInput.ts"
import type { ApiError } from "../ApiError.ts"
import type { McpToolSpec, ToolOutcome } from "./McpTool.ts"

/** Protocol revisions this server speaks, newest first. */
export const SUPPORTED_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const
export const LATEST_VERSION = SUPPORTED_VERSIONS[0]
/** What a client that sends no MCP-Protocol-Version header speaks (the Streamable HTTP transport's rule). */
export const DEFAULT_HTTP_VERSION = "2025-03-26"

export const isSupportedVersion = (version: string): boolean => (SUPPORTED_VERSIONS as ReadonlyArray<string>).includes(version)

// JSON-RPC 2.0 error codes.
export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603
/** The answer to a call the client cancelled, where a transport must still answer something. */
export const REQUEST_CANCELLED = -32800

export type RequestId = string | number

export interface JsonRpcError {
  readonly jsonrpc: "2.0"
  readonly id: RequestId | null
  readonly error: { readonly code: number; readonly message: string }
}
export interface JsonRpcResult {
  readonly jsonrpc: "2.0"
  readonly id: RequestId
  readonly result: unknown
}
export type JsonRpcResponse = JsonRpcResult | JsonRpcError

export interface JsonRpcNotification {
  readonly jsonrpc: "2.0"
  readonly method: string
  readonly params?: unknown
}

export const rpcError = (id: RequestId | null, code: number, message: string): JsonRpcError => ({ jsonrpc: "2.0", id, error: { code, message } })
const rpcResult = (id: RequestId, result: unknown): JsonRpcResult => ({ jsonrpc: "2.0", id, result })

/** One incoming message, classified. */
export type Incoming =
  | { readonly _tag: "Request"; readonly id: RequestId; readonly method: string; readonly params: Record<string, unknown> | undefined }
  | { readonly _tag: "Notification"; readonly method: string; readonly params: Record<string, unknown> | undefined }
  | { readonly _tag: "Response" }
  | { readonly _tag: "Invalid"; readonly id: RequestId | null; readonly message: string }

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)
const isId = (value: unknown): value is RequestId => typeof value === "string" || (typeof value === "number" && Number.isFinite(value))

export const classify = (message: unknown): Incoming => {
  if (!isRecord(message)) return { _tag: "Invalid", id: null, message: "Invalid Request: a JSON-RPC message must be an object" }
  const id = isId(message.id) ? message.id : null
  if (message.jsonrpc !== "2.0") return { _tag: "Invalid", id, message: "Invalid Request: jsonrpc must be \"2.0\"" }
  if (typeof message.method !== "string") {
    return "result" in message || "error" in message
      ? { _tag: "Response" }
      : { _tag: "Invalid", id, message: "Invalid Request: method must be a string" }
  }
  if (message.params !== undefined && !isRecord(message.params)) return { _tag: "Invalid", id, message: "Invalid Request: params must be an object" }
  if (!("id" in message)) return { _tag: "Notification", method: message.method, params: message.params }
  if (id === null) return { _tag: "Invalid", id: null, message: "Invalid Request: id must be a string or a number" }
  return { _tag: "Request", id, method: message.method, params: message.params }
}

/** Who sends the messages, as far as the protocol cares. */
export interface McpCaller {
  /** The caller's identity (an API key's name; "stdio"): a cancellation reaches only the caller's own calls. */
  readonly id: string
  /** Sends a notification while a request is answered (progress); absent when the transport cannot. */
  readonly notify?: ((notification: JsonRpcNotification) => Effect.Effect<void>) | undefined
  /** One tool call against the caller's rate limit; a refusal becomes the call's isError result. */
  readonly charge: Effect.Effect<void, ApiError>
}

/** A request's answer: its response, or `cancelled` when the client cancelled it (the protocol sends nothing then). */
export type Answered = JsonRpcResponse | "cancelled"

export interface McpServerInfo {
  readonly name: string
  readonly title: string
  readonly version: string
  readonly instructions: string
}

export interface McpDispatcher<R> {
  /** Answers a request; never fails (protocol and tool errors are responses). */
  readonly request: (message: Extract<Incoming, { _tag: "Request" }>, caller: McpCaller) => Effect.Effect<Answered, never, R>
  /** Takes a notification (initialized, cancelled); nothing is answered. */
  readonly notification: (message: Extract<Incoming, { _tag: "Notification" }>, caller: McpCaller) => Effect.Effect<void>
  /** The tool listing tools/list answers. */
  readonly tools: ReadonlyArray<Record<string, unknown>>
}

const toolResult = (outcome: ToolOutcome) => ({
  content: [{ type: "text", text: outcome.text }],
  ...(outcome.structured === undefined ? {} : { structuredContent: outcome.structured }),
  isError: outcome.isError
})

const invalidParams = (id: RequestId, error: InvalidInput) => rpcError(id, INVALID_PARAMS, error.message)

/** The progress token of a request that asked for progress (`params._meta.progressToken`). */
const progressTokenOf = (params: Record<string, unknown> | undefined): RequestId | undefined => {
  const meta = params?._meta
  return isRecord(meta) && isId(meta.progressToken) ? meta.progressToken : undefined
}

export const makeMcpDispatcher = <R>(info: McpServerInfo, specs: ReadonlyArray<McpToolSpec<R>>): McpDispatcher<R> => {
  const byName = new Map(specs.map((spec) => [spec.name, spec]))
  const tools = specs.map((spec) => ({
    name: spec.name,
    title: spec.annotations.title,
    description: spec.description,
    inputSchema: spec.inputSchema,
    ...(spec.outputSchema === undefined ? {} : { outputSchema: spec.outputSchema }),
    annotations: spec.annotations
  }))
  // Calls in flight on this instance, by caller and request id, for notifications/cancelled.
  const inFlight = new Map<string, Fiber.Fiber<unknown, unknown>>()
  const flightKey = (caller: McpCaller, id: RequestId) => `${caller.id}\u0000${typeof id}:${id}`

  const initialize = (id: RequestId, params: Record<string, unknown> | undefined): JsonRpcResponse => {
    const requested = params?.protocolVersion
    if (typeof requested !== "string") return rpcError(id, INVALID_PARAMS, "params.protocolVersion: must be a string")
    return rpcResult(id, {
      protocolVersion: isSupportedVersion(requested) ? requested : LATEST_VERSION,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: info.name, title: info.title, version: info.version },
      instructions: info.instructions
    })
  }

  const callTool = (id: RequestId, params: Record<string, unknown> | undefined, caller: McpCaller): Effect.Effect<Answered, never, R> => {
    const name = params?.name
    if (typeof name !== "string") return Effect.succeed(rpcError(id, INVALID_PARAMS, "params.name: must be the name of a tool"))
    const spec = byName.get(name)
    if (spec === undefined) return Effect.succeed(rpcError(id, INVALID_PARAMS, `Unknown tool: ${JSON.stringify(name)}; tools/list names the tools`))
    const args = params?.arguments ?? {}
    const decoded = spec.decode(args)
    if (Result.isFailure(decoded)) return Effect.succeed(invalidParams(id, decoded.failure))
    const token = progressTokenOf(params)
    const notify = caller.notify
    let step = 0
    const progress = token === undefined || notify === undefined
      ? () => Effect.void
      : (message: string) => notify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: ++step, message } })
    const run: Effect.Effect<JsonRpcResponse, never, R> = caller.charge.pipe(
      Effect.matchEffect({
        onFailure: (refused) => Effect.succeed(rpcResult(id, toolResult({ text: refused.message, isError: true }))),
        onSuccess: () =>
          spec.call(decoded.success, { progress }).pipe(
            Effect.matchEffect({
              onFailure: (error) => Effect.succeed<JsonRpcResponse>(invalidParams(id, error)),
              onSuccess: (outcome) => Effect.succeed<JsonRpcResponse>(rpcResult(id, toolResult(outcome)))
            })
          )
      }),
      // A defect is logged and answered as a failed call; its details stay off the wire.
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.as(
            Effect.logError(`MCP tool ${name} failed`, cause),
            rpcResult(id, toolResult({ text: "The tool failed on the server; the failure was logged. Try again later.", isError: true }))
          )
      )
    )
    const key = flightKey(caller, id)
    // The call runs in a child fiber that notifications/cancelled can interrupt without ending this request.
    return Effect.flatMap(Effect.forkChild(run, { startImmediately: true }), (fiber) => {
      inFlight.set(key, fiber)
      const forget = Effect.sync(() => inFlight.get(key) === fiber && inFlight.delete(key))
      return Effect.map(Effect.ensuring(Fiber.await(fiber), forget), (exit): Answered => Exit.isSuccess(exit) ? exit.value : "cancelled")
    })
  }

  const request = (message: Extract<Incoming, { _tag: "Request" }>, caller: McpCaller): Effect.Effect<Answered, never, R> => {
    const { id, method, params } = message
    switch (method) {
      case "initialize":
        return Effect.succeed(initialize(id, params))
      case "ping":
        return Effect.succeed(rpcResult(id, {}))
      case "tools/list":
        return Effect.succeed(rpcResult(id, { tools }))
      case "tools/call":
        return callTool(id, params, caller)
      default:
        return Effect.succeed(rpcError(id, METHOD_NOT_FOUND, `Method not found: ${method}`))
    }
  }

  const notification = (message: Extract<Incoming, { _tag: "Notification" }>, caller: McpCaller): Effect.Effect<void> => {
    if (message.method !== "notifications/cancelled") return Effect.void
    const requestId = message.params?.requestId
    if (!isId(requestId)) return Effect.void
    const fiber = inFlight.get(flightKey(caller, requestId))
    return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
  }

  return { request, notification, tools }
}
