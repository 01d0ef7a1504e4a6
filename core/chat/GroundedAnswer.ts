/**
 * A grounded request from end to end, minus the model call: whether and how a request is
 * grounded (web_search_options, a `:online` model, the built-in grounded model, server
 * tools), the search query, the request the model gets (sources in a system message), and
 * the answer's citations verified (whole answers and streams alike).
 *
 * The query is the last user message; a short follow-up (fewer than 4 words, e.g. "and in
 * 2020?") is prefixed with the user message before it, so it still names its subject.
 */
import type { ChatChoice, ChatChunk, ChunkChoice, GroundingReport } from "./ChatCompletion.ts"
import { ChatModelError } from "./ChatError.ts"
import { type ChatMessage, type ChatRequest, contentText, type SearchContextSize, SERVER_TOOLS, type ServerTool } from "./ChatRequest.ts"
import { CitationScanner, verifyCitations } from "./Citations.ts"
import { GROUNDED_MODEL } from "./GroundedModel.ts"
import type { GroundingSettings, Retrieval } from "./Grounding.ts"
import { groundingMessage, searchResultsOf, type SourceRegistry } from "./GroundingSources.ts"
import type { LoopState } from "./ServerToolLoop.ts"

export const ONLINE_SUFFIX = ":online"

export interface GroundingPlan {
  /** The model that answers (without `:online`). */
  readonly model: string
  /** Search before the model is asked. */
  readonly search: boolean
  readonly size: SearchContextSize
  readonly serverTools: ReadonlyArray<ServerTool>
}

const noServerTools: ReadonlyArray<ServerTool> = []

/** The server tools whose names none of the request's own tools takes. */
const serverToolsBeside = (request: ChatRequest): ReadonlyArray<ServerTool> => {
  const clientNames = new Set((request.tools ?? []).map((t) => t.function.name))
  return SERVER_TOOLS.filter((t) => !clientNames.has(t))
}

/**
 * How a request is grounded, undefined when it is not; a failure for `x:online` when `x` is no model.
 * A model configured under a name ending in `:online` is that model, not a suffix.
 */
export const planOf = (
  request: ChatRequest,
  settings: GroundingSettings,
  hasModel: (model: string) => boolean
): GroundingPlan | ChatModelError | undefined => {
  let model = request.model
  let online = false
  if (model.endsWith(ONLINE_SUFFIX) && !hasModel(model)) {
    model = model.slice(0, -ONLINE_SUFFIX.length)
    online = true
    if (!hasModel(model)) {
      return new ChatModelError({
        reason: "model_not_found",
        param: "model",
        message: `model ${JSON.stringify(model)} (asked as ${JSON.stringify(request.model)}) does not exist; GET /v1/models lists the models`
      })
    }
  }
  // An unknown model is the router's to refuse (404), before anything is searched.
  if (!online && !hasModel(model)) return undefined
  const search = online || request.web_search_options !== undefined || model === GROUNDED_MODEL
  const serverTools = request.serverTools ?? (settings.serverTools ? serverToolsBeside(request) : noServerTools)
  if (!search && serverTools.length === 0) return undefined
  return { model, search, size: request.web_search_options?.search_context_size ?? settings.contextSize, serverTools }
}

const MAX_QUERY = 400
const words = (text: string) => text.split(" ").filter((w) => w !== "").length

/** The search query of a conversation (see the module comment). */
export const queryOf = (messages: ReadonlyArray<ChatMessage>): string => {
  const users = messages.filter((m) => m.role === "user").map((m) => contentText(m.content).replace(/\s+/g, " ").trim()).filter((t) => t !== "")
  const last = users.at(-1) ?? ""
  const query = words(last) < 4 && users.length > 1 ? `${users.at(-2)} ${last}` : last
  return query.slice(0, MAX_QUERY)
}

/** The sources' system message goes after the client's own leading system messages. */
export const withSourcesMessage = (messages: ReadonlyArray<ChatMessage>, text: string): ReadonlyArray<ChatMessage> => {
  let at = 0
  while (at < messages.length && messages[at]!.role === "system") at++
  return [...messages.slice(0, at), { role: "system", content: text }, ...messages.slice(at)]
}

/** The request the model answers: sources in a system message and in `grounding`, server tools set. */
export const groundedRequest = (
  request: ChatRequest,
  plan: GroundingPlan,
  query: string,
  registry: SourceRegistry,
  retrieval: Retrieval | undefined,
  today: string
): ChatRequest => {
  const { serverTools: _asked, ...rest } = request
  const messages = plan.search
    ? withSourcesMessage(request.messages, groundingMessage(query, registry.sources, today, request.web_search_options, retrieval?.detail))
    : request.messages
  return {
    ...rest,
    model: plan.model,
    messages,
    ...(plan.search ? { grounding: { query, sources: [...registry.sources] } } : {}),
    ...(plan.serverTools.length > 0 ? { serverTools: plan.serverTools } : {})
  }
}

export const reportOf = (
  plan: GroundingPlan,
  query: string,
  registry: SourceRegistry,
  retrieval: Retrieval | undefined,
  loop: LoopState,
  removed: number
): GroundingReport => {
  const notes: Array<string> = []
  if (retrieval?.detail !== undefined) notes.push(`search ${retrieval.status}: ${retrieval.detail}`)
  if (loop.limitReached) notes.push(`the model still called server tools after ${loop.rounds} rounds (chat.grounding.maxToolRounds); the answer ends there`)
  return {
    query,
    search_context_size: plan.size,
    retrieval: retrieval?.status ?? "skipped",
    sources: registry.sources.length,
    pages_read: retrieval?.pagesRead ?? 0,
    citations_removed: removed,
    tool_rounds: loop.rounds,
    tool_calls: loop.calls,
    tool_limit_reached: loop.limitReached,
    ...(notes.length === 0 ? {} : { note: notes.join("; ") })
  }
}

const lookupIn = (registry: SourceRegistry) => (n: number) => registry.get(n)

/** Whole choices with their citations verified; returns the number of markers removed. */
export const citeChoices = (choices: ReadonlyArray<ChatChoice>, registry: SourceRegistry): { choices: Array<ChatChoice>; removed: number } => {
  let removed = 0
  const out = choices.map((choice): ChatChoice => {
    const content = choice.message.content
    if (content === null) return { ...choice, message: { ...choice.message, annotations: [] } }
    const verified = verifyCitations(content, lookupIn(registry))
    removed += verified.removed
    return { ...choice, message: { ...choice.message, content: verified.content, annotations: [...verified.annotations] } }
  })
  return { choices: out, removed }
}

/**
 * The citation step of a grounded stream, after the gateway's own (stops, validation): content
 * deltas pass through a scanner per choice; a choice's finishing chunk gets the held tail
 * before it and its annotations; the last chunk (the usage chunk) gets search_results and the report.
 */
export class CitationPass {
  private readonly scanners = new Map<number, CitationScanner>()
  private readonly registry: SourceRegistry
  private readonly report: (removed: number) => GroundingReport

  constructor(registry: SourceRegistry, report: (removed: number) => GroundingReport) {
    this.registry = registry
    this.report = report
  }

  private scanner(index: number): CitationScanner {
    let scanner = this.scanners.get(index)
    if (scanner === undefined) {
      scanner = new CitationScanner(lookupIn(this.registry))
      this.scanners.set(index, scanner)
    }
    return scanner
  }

  push(chunk: ChatChunk): Array<ChatChunk> {
    const out: Array<ChatChunk> = []
    const choices: Array<ChunkChoice> = []
    for (const choice of chunk.choices) {
      const scanner = this.scanner(choice.index)
      let delta = choice.delta
      if (delta.content) {
        const shown = scanner.push(delta.content)
        const { content: _raw, ...rest } = delta
        delta = shown === "" ? rest : { ...rest, content: shown }
      }
      if (choice.finish_reason !== null) {
        const tail = scanner.flush()
        if (tail !== "") out.push({ choices: [{ index: choice.index, delta: { content: tail }, finish_reason: null }] })
        delta = { ...delta, annotations: [...scanner.annotations] }
      } else if (Object.keys(delta).length === 0) continue
      choices.push(delta === choice.delta ? choice : { ...choice, delta })
    }
    if (choices.length > 0 || chunk.choices.length === 0) {
      out.push(chunk.choices.length === 0 ? chunk : { ...chunk, choices })
    } else if (chunk.usage !== undefined) out.push({ choices: [], usage: chunk.usage })
    return out
  }

  /** The chunk that closes the stream: sources and the report (the gateway's usage chunk precedes it). */
  end(): ChatChunk {
    let removed = 0
    for (const s of this.scanners.values()) removed += s.removed
    return { choices: [], search_results: searchResultsOf(this.registry.sources), periscope_grounding: this.report(removed) }
  }
}
