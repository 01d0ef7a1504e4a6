/**
 * Server tools: `web_search(query, allowed_domains?, blocked_domains?, freshness?)` and
 * `web_fetch(url)` offered to the model as functions
 * beside the client's own. When the model calls only server tools, the gateway runs them
 * (Grounding), appends the calls and their results to the conversation and asks the model
 * again, at most `maxToolRounds` times; the client sees one completion. A reply that calls a
 * client tool goes back to the client as always (server calls in the same reply are dropped:
 * the client could not run them). A model still calling server tools after the last round is
 * stopped there: its text so far is the answer, finish_reason "length" (a limit ended it, as
 * with max_tokens) and `periscope_grounding.tool_limit_reached: true`.
 *
 * One choice per loop (n > 1 fans out whole loops). Streams pass text and reasoning through as
 * they come; tool-call deltas and the finish are held until the round's end decides.
 */
import { Effect, Schema, Stream } from "effect"
import { DomainName, FRESHNESS_WINDOWS, type FreshnessWindow } from "../search/SearchQuery.ts"
import type { AnswerToolCall, ChatChoice, ChatChunk, ChatResult, ChunkChoice, Usage } from "./ChatCompletion.ts"
import type { ChatModelError } from "./ChatError.ts"
import type { ChatMessage, ChatRequest, ServerTool, ToolDefinition } from "./ChatRequest.ts"
import { sumUsage } from "./FanOut.ts"
import type { FinishReason } from "./FinishReason.ts"
import type { Grounding, ToolSearch } from "./Grounding.ts"
import type { SourceRegistry } from "./GroundingSources.ts"

/** Domains one web_search call may name in each list. */
const MAX_TOOL_DOMAINS = 20

const definitions: Readonly<Record<ServerTool, ToolDefinition>> = {
  web_search: {
    type: "function",
    function: {
      name: "web_search",
      description: "Search the web. Returns numbered results; cite the ones you use as [k] after the statement they support. " +
        "Optionally keep the search to some sites, leave sites out, or ask only for recent pages.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", description: "What to search for" },
          allowed_domains: {
            type: "array",
            items: { type: "string" },
            maxItems: MAX_TOOL_DOMAINS,
            description: "Only results from these sites and their subdomains, e.g. [\"python.org\"]"
          },
          blocked_domains: { type: "array", items: { type: "string" }, maxItems: MAX_TOOL_DOMAINS, description: "No results from these sites" },
          freshness: { type: "string", enum: [...FRESHNESS_WINDOWS], description: "Only pages published within the past day, week, month or year" }
        },
        required: ["query"],
        additionalProperties: false
      }
    }
  },
  web_fetch: {
    type: "function",
    function: {
      name: "web_fetch",
      description: "Read one web page (http or https URL) as Markdown. Returns its text with the number to cite it as [k].",
      parameters: {
        type: "object",
        properties: { url: { type: "string", description: "The page's http(s) URL" } },
        required: ["url"],
        additionalProperties: false
      }
    }
  }
}

export const serverToolDefinitions = (tools: ReadonlyArray<ServerTool>): Array<ToolDefinition> => tools.map((t) => definitions[t])

/** How the loop went, for `periscope_grounding` (shared by the choices of one request). */
export interface LoopState {
  rounds: number
  limitReached: boolean
  calls: number
}

export interface LoopContext {
  readonly grounding: Grounding["Service"]
  readonly registry: SourceRegistry
  readonly maxRounds: number
  readonly state: LoopState
}

interface HeldCall {
  id: string
  name: string
  arguments: string
}

const isServerCall = (request: ChatRequest, name: string): boolean => (request.serverTools ?? []).includes(name as ServerTool)

const isDomain = Schema.is(DomainName)

/** A web_search call's narrowing from its arguments, or what is wrong with them (told to the model). */
const toolSearchOf = (args: Record<string, unknown>): ToolSearch | string => {
  const domains = (field: "allowed_domains" | "blocked_domains"): ReadonlyArray<string> | string | undefined => {
    const value = args[field]
    if (value === undefined || value === null) return undefined
    if (!Array.isArray(value) || value.length > MAX_TOOL_DOMAINS) return `web_search: "${field}" must be an array of at most ${MAX_TOOL_DOMAINS} domain names`
    const bad = value.findIndex((d) => typeof d !== "string" || !isDomain(d))
    if (bad >= 0) return `web_search: "${field}[${bad}]" must be a domain name such as example.com, got ${JSON.stringify(value[bad]).slice(0, 100)}`
    return value as ReadonlyArray<string>
  }
  const allowed = domains("allowed_domains")
  if (typeof allowed === "string") return allowed
  const blocked = domains("blocked_domains")
  if (typeof blocked === "string") return blocked
  const freshness = args.freshness
  if (freshness !== undefined && freshness !== null && !(FRESHNESS_WINDOWS as ReadonlyArray<unknown>).includes(freshness)) {
    return `web_search: "freshness" must be one of ${FRESHNESS_WINDOWS.join(", ")}`
  }
  return {
    ...(allowed === undefined ? {} : { allowedDomains: allowed }),
    ...(blocked === undefined ? {} : { blockedDomains: blocked }),
    ...(freshness === undefined || freshness === null ? {} : { freshness: freshness as FreshnessWindow })
  }
}

/** The tool's answer for the model; bad arguments are told to the model, not the client. */
const runCall = (context: LoopContext, request: ChatRequest, call: HeldCall): Effect.Effect<string> => {
  let args: unknown
  try {
    args = JSON.parse(call.arguments || "{}")
  } catch {
    return Effect.succeed(`${call.name}: the arguments are not JSON text (${call.arguments.slice(0, 200)})`)
  }
  const fields = typeof args === "object" && args !== null ? args as Record<string, unknown> : {}
  const field = call.name === "web_search" ? "query" : "url"
  const value = fields[field]
  if (typeof value !== "string" || value.trim() === "") return Effect.succeed(`${call.name}: the argument "${field}" must be a non-empty string`)
  if (call.name !== "web_search") return context.grounding.webFetch(value.trim(), context.registry)
  const narrow = toolSearchOf(fields)
  if (typeof narrow === "string") return Effect.succeed(narrow)
  return context.grounding.webSearch(value, context.registry, narrow, request.web_search_options)
}

/** The conversation after one round: the model's calls, then each call's result. */
const afterRound = (context: LoopContext, request: ChatRequest, messages: ReadonlyArray<ChatMessage>, content: string, calls: ReadonlyArray<HeldCall>) =>
  Effect.map(
    Effect.forEach(calls, (call) => runCall(context, request, call), { concurrency: 4 }),
    (results): ReadonlyArray<ChatMessage> => {
      context.state.calls += calls.length
      return [
        ...messages,
        {
          role: "assistant",
          content: content === "" ? null : content,
          tool_calls: calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }))
        },
        ...calls.map((c, i): ChatMessage => ({ role: "tool", tool_call_id: c.id, content: results[i]! }))
      ]
    }
  )

const withTools = (request: ChatRequest, messages: ReadonlyArray<ChatMessage>): ChatRequest => ({
  ...request,
  n: 1,
  messages,
  tools: [...(request.tools ?? []), ...serverToolDefinitions(request.serverTools ?? [])]
})

const heldOf = (calls: ReadonlyArray<AnswerToolCall>): Array<HeldCall> =>
  calls.map((c, i) => ({ id: c.id || `call_server_${i}`, name: c.function.name, arguments: c.function.arguments }))

/** One choice, whole: rounds until the model answers, calls a client tool, or the limit stops it. */
export const loopComplete = (
  context: LoopContext,
  complete: (request: ChatRequest) => Effect.Effect<ChatResult, ChatModelError>
) =>
  Effect.fnUntraced(function*(request: ChatRequest): Effect.fn.Return<ChatResult, ChatModelError> {
    let messages = request.messages
    let earlier = ""
    const usages: Array<Usage | undefined> = []
    for (let round = 0;; round++) {
      const result = yield* complete(withTools(request, messages))
      usages.push(result.usage)
      const choice = result.choices[0]!
      const calls = choice.message.tool_calls ?? []
      const server = calls.filter((c) => isServerCall(request, c.function.name))
      const client = calls.filter((c) => !isServerCall(request, c.function.name))
      const content = choice.message.content ?? ""
      const done = (message: ChatChoice["message"], finish: FinishReason): ChatResult => ({
        model: result.model,
        choices: [{ ...choice, index: 0, message, finish_reason: finish }],
        usage: sumUsage(usages)
      })
      if (server.length === 0 || client.length > 0) {
        const { tool_calls: _all, ...rest } = choice.message
        return done({
          ...rest,
          content: earlier === "" ? choice.message.content : earlier + content,
          ...(client.length > 0 ? { tool_calls: client } : {})
        }, client.length > 0 || server.length === 0 ? choice.finish_reason : "stop")
      }
      if (round >= context.maxRounds) {
        context.state.limitReached = true
        const { tool_calls: _all, ...rest } = choice.message
        return done({ ...rest, content: earlier + content }, "length")
      }
      context.state.rounds = Math.max(context.state.rounds, round + 1)
      earlier += content
      messages = yield* afterRound(context, request, messages, content, heldOf(server))
    }
  })

/** One choice, streamed: each round streams; a round ending in server calls is followed by the next. */
export const loopStream = (
  context: LoopContext,
  stream: (request: ChatRequest) => Stream.Stream<ChatChunk, ChatModelError>
) =>
(request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> => {
  const usages: Array<Usage | undefined> = []
  const round = (index: number, messages: ReadonlyArray<ChatMessage>): Stream.Stream<ChatChunk, ChatModelError> =>
    Stream.suspend(() => {
      const calls = new Map<number, HeldCall>()
      let content = ""
      let finish: FinishReason | null = null
      let finishChoice: ChunkChoice | undefined
      let usage: Usage | undefined
      const body = stream(withTools(request, messages)).pipe(
        Stream.map((chunk): Array<ChatChunk> => {
          if (chunk.usage !== undefined) usage = chunk.usage
          const out: Array<ChunkChoice> = []
          for (const choice of chunk.choices) {
            const delta = choice.delta
            for (const d of delta.tool_calls ?? []) {
              let call = calls.get(d.index)
              if (call === undefined) {
                call = { id: "", name: "", arguments: "" }
                calls.set(d.index, call)
              }
              if (d.id) call.id = d.id
              if (d.function?.name) call.name += d.function.name
              if (d.function?.arguments) call.arguments += d.function.arguments
            }
            if (delta.content) content += delta.content
            const { tool_calls: _held, ...passed } = delta
            if (choice.finish_reason !== null) {
              finish = choice.finish_reason
              finishChoice = choice
            }
            if (passed.content || passed.reasoning_content) out.push({ index: 0, delta: passed, finish_reason: null })
          }
          return out.length === 0 ? [] : [{ choices: out }]
        }),
        Stream.flattenIterable
      )
      const next = Stream.unwrap(Effect.suspend((): Effect.Effect<Stream.Stream<ChatChunk, ChatModelError>> => {
        usages.push(usage)
        const all = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c], i) => ({ ...c, id: c.id || `call_server_${index}_${i}` }))
        const server = all.filter((c) => isServerCall(request, c.name))
        const client = all.filter((c) => !isServerCall(request, c.name))
        const ending = (finishReason: FinishReason | null, toolCalls: ReadonlyArray<HeldCall>): Stream.Stream<ChatChunk> => {
          const chunks: Array<ChatChunk> = []
          if (toolCalls.length > 0) {
            chunks.push({
              choices: [{
                index: 0,
                delta: { tool_calls: toolCalls.map((c, i) => ({ index: i, id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } })) },
                finish_reason: null
              }]
            })
          }
          if (finishReason !== null) chunks.push({ choices: [{ ...(finishChoice ?? { delta: {} }), index: 0, delta: {}, finish_reason: finishReason }] })
          const summed = sumUsage(usages)
          if (summed !== undefined) chunks.push({ choices: [], usage: summed })
          return Stream.fromIterable(chunks)
        }
        if (server.length === 0 || client.length > 0) return Effect.succeed(ending(client.length === 0 && server.length > 0 ? "stop" : finish, client))
        if (index >= context.maxRounds) {
          context.state.limitReached = true
          return Effect.succeed(ending("length", []))
        }
        context.state.rounds = Math.max(context.state.rounds, index + 1)
        return Effect.map(afterRound(context, request, messages, content, server), (more) => round(index + 1, more))
      }))
      return Stream.concat(body, next)
    })
  return round(0, request.messages)
}
