/**
 * A real OpenAI-compatible model server on loopback, for tests and
 * benchmarks of the gateway: POST /v1/chat/completions (whole and streamed)
 * and GET /v1/models, over node:http. What each request gets is a Scenario:
 * reply text, reasoning, tool calls (invalid JSON arguments included),
 * delays, a status to answer (429 with Retry-After, 500, 503), a connection
 * dropped before the headers or after N events, an error event mid-stream,
 * a stream that never finishes or ends without [DONE].
 *
 * It records every request (body, headers, when it arrived and when its
 * connection side closed, whether the answer was complete) and every TCP
 * connection, so tests can assert parameter mapping, the API key, retries
 * and that a cancelled call closed the upstream connection.
 *
 * Run alone for benchmarks:  node test/support/mockUpstream.ts [--port 0] [--chunk-delay-ms 0] [--words 64]
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http"
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Redacted } from "effect"
import type { ChatRequest } from "../../core/chat/ChatRequest.ts"
import type { UpstreamTarget } from "../../core/chat/Upstream.ts"

export interface ScriptedToolCall {
  readonly id?: string
  readonly name: string
  /** Sent as is: invalid JSON stays invalid. */
  readonly arguments: string
}

export interface MockUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
}

export interface Scenario {
  /** The reply text; streamed word by word (or in `pieceSize` characters). Default "Hello from the mock upstream." */
  readonly content?: string
  readonly reasoning?: string
  /** The field reasoning goes under; servers differ. Default reasoning_content. */
  readonly reasoningField?: "reasoning_content" | "reasoning"
  readonly toolCalls?: ReadonlyArray<ScriptedToolCall>
  /** The raw finish_reason sent; default tool_calls when there are tool calls, stop otherwise. */
  readonly finishReason?: string | null
  /** Usage reported; null sends none. Default: word counts. */
  readonly usage?: MockUsage | null
  /** Characters per streamed piece; default: one word per piece. */
  readonly pieceSize?: number
  /** Wait before anything is sent (no headers yet). */
  readonly headersDelayMs?: number
  /** Streams: wait after the headers before the first event. Whole answers: added to headersDelayMs. */
  readonly firstChunkDelayMs?: number
  /** Streams: wait between events. */
  readonly chunkDelayMs?: number
  /** Answer this status with an OpenAI error body instead of a reply. */
  readonly status?: number
  readonly errorMessage?: string
  /** Sent as Retry-After with `status`. */
  readonly retryAfter?: string
  /** Destroy the socket before sending anything. */
  readonly dropBeforeHeaders?: boolean
  /** Streams: destroy the socket after this many data events. Whole answers: after half the body. */
  readonly dropAfterChunks?: number
  /** Streams: after this many data events send `data: {"error":...}` (then [DONE] unless omitDone). */
  readonly errorEventAfterChunks?: number
  readonly errorEvent?: unknown
  /** Streams: after this many data events send nothing more and keep the connection open. */
  readonly stallAfterChunks?: number
  /** Streams: end the body without data: [DONE]. */
  readonly omitDone?: boolean
  /** Streams: send no finish_reason. */
  readonly omitFinishReason?: boolean
  /** Streams: SSE comment lines before the first event. */
  readonly keepAliveComments?: number
  /** Streams: this exact SSE text after the headers instead of the scripted answer. */
  readonly rawSse?: string
  /** Whole answers: this exact body. */
  readonly rawBody?: string
  /** Answer a streaming request with a whole JSON completion, as a server that ignores `stream` would. */
  readonly ignoreStream?: boolean
  /** Whether n > 1 is honoured; false answers 400 as llama-server does. Default true. */
  readonly supportsN?: boolean
}

export interface RecordedRequest {
  readonly index: number
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The parsed JSON body (undefined when not JSON). */
  readonly body: any
  readonly connection: number
  /** performance.now() when the request arrived. */
  readonly receivedAt: number
  /** performance.now() when the response side closed (finished, or the client went away). */
  closedAt: number | undefined
  /** The whole answer was written before the close. */
  completed: boolean
  /** Data events written (streams). */
  events: number
}

export interface RecordedConnection {
  readonly id: number
  readonly openedAt: number
  closedAt: number | undefined
}

export interface MockUpstreamOptions {
  /** When set, requests without `Authorization: Bearer <apiKey>` get 401. */
  readonly apiKey?: string
  /** Scenarios used one per chat request in order; then `respond`, `byModel`, `defaultScenario`. */
  readonly script?: ReadonlyArray<Scenario>
  readonly respond?: (body: any, index: number) => Scenario | undefined
  /** Scenario by the request's model name. */
  readonly byModel?: Readonly<Record<string, Scenario>>
  readonly defaultScenario?: Scenario
  /** Listed by GET /v1/models. Default ["mock-model"]. */
  readonly models?: ReadonlyArray<string>
  /** Keep request and connection records (default true; benchmarks turn it off). */
  readonly record?: boolean
  readonly port?: number
}

export interface MockUpstream {
  /** Base URL with /v1, as targets are configured. */
  readonly url: string
  readonly requests: Array<RecordedRequest>
  readonly connections: Array<RecordedConnection>
  /** Chat requests received, recorded or not. */
  chatRequests(): number
  /** Resolves when request `index` has arrived. */
  waitForRequest(index: number, timeoutMs?: number): Promise<RecordedRequest>
  /** Resolves when request `index`'s response side has closed. */
  waitForClose(index: number, timeoutMs?: number): Promise<RecordedRequest>
  close(): Promise<void>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const DEFAULT_REPLY = "Hello from the mock upstream."

const words = (text: string): Array<string> => text.match(/\S+\s*|\s+/g) ?? []
const pieces = (text: string, size: number | undefined): Array<string> => {
  if (text === "") return []
  if (size === undefined) return words(text)
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const countWords = (text: string) => words(text).filter((w) => w.trim() !== "").length

const usageFor = (body: any, scenario: Scenario, choices: number): MockUsage => {
  let prompt = 0
  for (const m of Array.isArray(body?.messages) ? body.messages : []) prompt += typeof m?.content === "string" ? countWords(m.content) : 1
  const completion = choices * (countWords(scenario.content ?? DEFAULT_REPLY) + countWords(scenario.reasoning ?? "") +
    (scenario.toolCalls?.length ?? 0))
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

const finishOf = (scenario: Scenario): string | null =>
  scenario.finishReason !== undefined ? scenario.finishReason : (scenario.toolCalls?.length ?? 0) > 0 ? "tool_calls" : "stop"

/** The data events of one choice, in order: role, reasoning, content, tool calls, finish. */
const choiceDeltas = (scenario: Scenario, index: number): Array<Record<string, unknown>> => {
  const reasoningField = scenario.reasoningField ?? "reasoning_content"
  const out: Array<Record<string, unknown>> = [{ index, delta: { role: "assistant", content: "" }, finish_reason: null }]
  for (const piece of pieces(scenario.reasoning ?? "", scenario.pieceSize))
    out.push({ index, delta: { [reasoningField]: piece }, finish_reason: null })
  const content = scenario.content ?? (scenario.toolCalls !== undefined ? "" : DEFAULT_REPLY)
  for (const piece of pieces(content, scenario.pieceSize)) out.push({ index, delta: { content: piece }, finish_reason: null })
  scenario.toolCalls?.forEach((call, i) => {
    out.push({
      index,
      delta: { tool_calls: [{ index: i, id: call.id ?? `call_mock_${i}`, type: "function", function: { name: call.name, arguments: "" } }] },
      finish_reason: null
    })
    // Arguments in two halves, as servers stream them: the client must join them by index.
    const half = Math.ceil(call.arguments.length / 2)
    for (const part of [call.arguments.slice(0, half), call.arguments.slice(half)])
      if (part !== "") out.push({ index, delta: { tool_calls: [{ index: i, function: { arguments: part } }] }, finish_reason: null })
  })
  if (!scenario.omitFinishReason) out.push({ index, delta: {}, finish_reason: finishOf(scenario) })
  return out
}

const completionBody = (body: any, scenario: Scenario, n: number, id: string): Record<string, unknown> => {
  const reasoningField = scenario.reasoningField ?? "reasoning_content"
  const choices = Array.from({ length: n }, (_, index) => ({
    index,
    message: {
      role: "assistant",
      content: scenario.content ?? (scenario.toolCalls !== undefined ? null : DEFAULT_REPLY),
      ...(scenario.reasoning !== undefined ? { [reasoningField]: scenario.reasoning } : {}),
      ...(scenario.toolCalls !== undefined
        ? {
          tool_calls: scenario.toolCalls.map((call, i) => ({
            id: call.id ?? `call_mock_${i}`,
            type: "function",
            function: { name: call.name, arguments: call.arguments }
          }))
        }
        : {})
    },
    finish_reason: finishOf(scenario),
    logprobs: null
  }))
  const usage = scenario.usage === undefined ? usageFor(body, scenario, n) : scenario.usage
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body?.model ?? "mock-model",
    choices,
    ...(usage !== null ? { usage } : {})
  }
}

const errorJson = (status: number, message: string) =>
  JSON.stringify({ error: { message, type: status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error", code: status } })

export const startMockUpstream = async (options: MockUpstreamOptions = {}): Promise<MockUpstream> => {
  const record = options.record !== false
  const requests: Array<RecordedRequest> = []
  const connections: Array<RecordedConnection> = []
  const sockets = new Set<Socket>()
  const socketIds = new WeakMap<Socket, number>()
  const waiters = new Set<() => void>()
  const notify = () => { for (const w of waiters) w() }
  const script = [...(options.script ?? [])]
  let chatCount = 0
  let connectionCount = 0
  let completionId = 0

  const scenarioFor = (body: any, index: number): Scenario =>
    script.shift() ?? options.respond?.(body, index) ?? options.byModel?.[body?.model] ?? options.defaultScenario ?? {}

  const handleChat = async (req: IncomingMessage, res: ServerResponse, entry: RecordedRequest | undefined, body: any, index: number) => {
    const scenario = scenarioFor(body, index)
    const gone = () => res.destroyed || res.writableEnded
    if (scenario.dropBeforeHeaders) {
      req.socket.destroy()
      return
    }
    if (scenario.headersDelayMs) await sleep(scenario.headersDelayMs)
    if (gone()) return
    const n = typeof body?.n === "number" ? body.n : 1
    if (scenario.status !== undefined || (scenario.supportsN === false && n > 1)) {
      const status = scenario.status ?? 400
      const message = scenario.errorMessage ?? (scenario.status === undefined ? "Only one completion choice is allowed" : `mock upstream answered ${status}`)
      res.writeHead(status, { "content-type": "application/json", ...(scenario.retryAfter !== undefined ? { "retry-after": scenario.retryAfter } : {}) })
      res.end(errorJson(status, message))
      if (entry) entry.completed = true
      return
    }
    const id = `chatcmpl-mock-${++completionId}`
    if (body?.stream !== true || scenario.ignoreStream) {
      if (scenario.firstChunkDelayMs) await sleep(scenario.firstChunkDelayMs)
      if (gone()) return
      const text = scenario.rawBody ?? JSON.stringify(completionBody(body, scenario, n, id))
      if (scenario.dropAfterChunks !== undefined) {
        res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) })
        res.write(text.slice(0, Math.floor(text.length / 2)), () => req.socket.destroy())
        return
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.end(text)
      if (entry) entry.completed = true
      return
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    res.flushHeaders()
    if (scenario.keepAliveComments) for (let i = 0; i < scenario.keepAliveComments; i++) res.write(": keep-alive\n\n")
    if (scenario.rawSse !== undefined) {
      if (scenario.firstChunkDelayMs) await sleep(scenario.firstChunkDelayMs)
      if (gone()) return
      res.end(scenario.rawSse)
      if (entry) entry.completed = true
      return
    }
    const created = Math.floor(Date.now() / 1000)
    const model = body?.model ?? "mock-model"
    const events: Array<string> = []
    for (let c = 0; c < n; c++) {
      for (const choice of choiceDeltas(scenario, c))
        events.push(JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [choice] }))
    }
    const usage = scenario.usage === undefined ? usageFor(body, scenario, n) : scenario.usage
    if (usage !== null && body?.stream_options?.include_usage === true)
      events.push(JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage }))
    const errorAt = scenario.errorEventAfterChunks
    const stallAt = scenario.stallAfterChunks
    const dropAt = scenario.dropAfterChunks
    const paced = Boolean(scenario.firstChunkDelayMs || scenario.chunkDelayMs) || errorAt !== undefined || stallAt !== undefined || dropAt !== undefined
    if (!paced) {
      // The benchmark path: the whole answer in one write.
      let text = ""
      for (const event of events) text += `data: ${event}\n\n`
      if (!scenario.omitDone) text += "data: [DONE]\n\n"
      if (entry) entry.events = events.length
      res.end(text)
      if (entry) entry.completed = true
      return
    }
    if (scenario.firstChunkDelayMs) await sleep(scenario.firstChunkDelayMs)
    for (let i = 0; i <= events.length; i++) {
      if (gone()) return
      if (i === dropAt) {
        req.socket.destroy()
        return
      }
      if (i === stallAt) return // the connection stays open until the client or close() ends it
      if (i === errorAt) {
        const error = scenario.errorEvent ?? { message: "mock upstream failed mid-stream", type: "server_error", code: 500 }
        res.write(`data: ${JSON.stringify({ error })}\n\n`)
        break
      }
      if (i === events.length) break
      if (i > 0 && scenario.chunkDelayMs) await sleep(scenario.chunkDelayMs)
      if (gone()) return
      // Waiting for the write to reach the socket makes "after N events" exact when the socket is destroyed next.
      await new Promise<void>((resolve) => res.write(`data: ${events[i]}\n\n`, () => resolve()))
      if (entry) entry.events++
    }
    if (gone()) return
    res.end(scenario.omitDone ? "" : "data: [DONE]\n\n")
    if (entry) entry.completed = true
  }

  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!
      const text = Buffer.concat(chunks).toString("utf8")
      let body: any
      try {
        body = text === "" ? undefined : JSON.parse(text)
      } catch {
        body = undefined
      }
      const isChat = req.method === "POST" && path.endsWith("/chat/completions")
      const index = isChat ? chatCount++ : -1
      let entry: RecordedRequest | undefined
      if (record) {
        entry = {
          index: requests.length,
          method: req.method ?? "",
          path,
          headers: req.headers,
          body,
          connection: socketIds.get(req.socket) ?? -1,
          receivedAt: performance.now(),
          closedAt: undefined,
          completed: false,
          events: 0
        }
        requests.push(entry)
        const recorded = entry
        res.on("close", () => {
          recorded.closedAt = performance.now()
          notify()
        })
        notify()
      }
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        res.writeHead(401, { "content-type": "application/json" })
        res.end(errorJson(401, "Incorrect API key provided"))
        return
      }
      if (req.method === "GET" && path.endsWith("/models")) {
        const data = (options.models ?? ["mock-model"]).map((id) => ({ id, object: "model", created: 0, owned_by: "mock" }))
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ object: "list", data }))
        if (entry) entry.completed = true
        return
      }
      if (!isChat) {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(errorJson(404, `no route ${req.method} ${path}`))
        return
      }
      handleChat(req, res, entry, body, index).catch((error) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)))
      })
    })
  })
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    const id = connectionCount++
    socketIds.set(socket, id)
    const connection: RecordedConnection = { id, openedAt: performance.now(), closedAt: undefined }
    if (record) connections.push(connection)
    socket.on("close", () => {
      sockets.delete(socket)
      connection.closedAt = performance.now()
      notify()
    })
  })

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port

  const waitUntil = <A>(check: () => A | undefined, timeoutMs: number, what: string): Promise<A> =>
    new Promise((resolve, reject) => {
      const now = check()
      if (now !== undefined) return resolve(now)
      const waiter = () => {
        const value = check()
        if (value === undefined) return
        waiters.delete(waiter)
        clearTimeout(timer)
        resolve(value)
      }
      const timer = setTimeout(() => {
        waiters.delete(waiter)
        reject(new Error(`mock upstream: ${what} did not happen within ${timeoutMs} ms`))
      }, timeoutMs)
      waiters.add(waiter)
    })

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    connections,
    chatRequests: () => chatCount,
    waitForRequest: (index, timeoutMs = 10_000) => waitUntil(() => requests[index], timeoutMs, `request ${index}`),
    waitForClose: (index, timeoutMs = 10_000) =>
      waitUntil(() => (requests[index]?.closedAt !== undefined ? requests[index] : undefined), timeoutMs, `close of request ${index}`),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

/** A loopback port that nothing listens on (it was free a moment ago): connections to it are refused. */
export const closedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createNetServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

/** A target pointing at a mock upstream, with generous timeouts and fast retries unless overridden. */
export const mockTarget = (upstream: { readonly url: string }, overrides: Partial<UpstreamTarget> & { readonly key?: string } = {}): UpstreamTarget => {
  const { key, ...rest } = overrides
  return {
    name: "mock",
    baseUrl: upstream.url,
    apiKey: key === undefined ? undefined : Redacted.make(key),
    model: "mock-model",
    params: {},
    supportsN: true,
    timeouts: { connectMs: 5_000, firstTokenMs: 10_000, totalMs: 30_000 },
    retries: { max: 2, baseDelayMs: 10 },
    headers: {},
    ...rest
  }
}

/** A ChatRequest as the pipeline hands it to backends: spec defaults applied. */
export const chatRequest = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "periscope-alias",
  messages: [{ role: "user", content: "Say hello." }],
  frequency_penalty: 0.5,
  max_tokens: 512,
  n: 1,
  stop: [],
  stream: false,
  temperature: 0.7,
  top_p: 0.7,
  top_k: 50,
  ...overrides
})

// Standalone: a server for benchmarks in its own process, printing its URL.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      "chunk-delay-ms": { type: "string", default: "0" },
      words: { type: "string", default: "64" }
    }
  })
  const content = Array.from({ length: Number(values.words) }, (_, i) => `word${i}`).join(" ")
  const upstream = await startMockUpstream({
    port: Number(values.port),
    record: false,
    defaultScenario: { content, chunkDelayMs: Number(values["chunk-delay-ms"]) }
  })
  console.log(upstream.url)
  const stop = () => void upstream.close().then(() => process.exit(0))
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}
