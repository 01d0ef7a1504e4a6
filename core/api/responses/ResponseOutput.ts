/**
 * The gateway's answer as a Responses API response: a web_search_call item when the answer was
 * grounded (its query and the sources the model was given), the model's reasoning as a
 * reasoning item, its text as a message whose output_text carries the verified citations as
 * url_citation annotations, and its tool calls as function_call items. A whole answer is mapped
 * here at once; a stream is built from the same pieces by ResponseEventSequencer.
 */
import type { SearchResultItem, UrlCitationAnnotation, Usage } from "../../chat/ChatCompletion.ts"
import type { GatewayResult } from "../../chat/ChatGateway.ts"
import type { FinishReason } from "../../chat/FinishReason.ts"
import { randomId } from "../CompletionIds.ts"
import type {
  FunctionCallOutput,
  ItemStatus,
  MessageOutput,
  OutputItem,
  ReasoningOutput,
  ResponseObject,
  ResponseUsage,
  UrlCitation,
  WebSearchCallOutput
} from "./ResponseObject.ts"
import type { ResponsesRequest } from "./ResponsesRequest.ts"

export const responseId = (): string => randomId("resp_")
export const itemId = (prefix: "ws_" | "rs_" | "msg_" | "fc_"): string => randomId(prefix)

/** The fields of a response that echo the request: the same on every event of a stream. */
export type ResponseShell = Omit<ResponseObject, "status" | "completed_at" | "error" | "incomplete_details" | "output" | "usage" | "periscope_grounding">

export const responseShell = (id: string, createdAt: number, model: string, request: ResponsesRequest): ResponseShell => ({
  id,
  object: "response",
  created_at: createdAt,
  instructions: request.instructions ?? null,
  max_output_tokens: request.max_output_tokens ?? null,
  max_tool_calls: request.max_tool_calls ?? null,
  model,
  parallel_tool_calls: request.parallel_tool_calls ?? true,
  previous_response_id: null,
  store: false,
  background: false,
  temperature: request.temperature ?? null,
  top_p: request.top_p ?? null,
  text: {
    format: request.text?.format ?? { type: "text" },
    ...(request.text?.verbosity === undefined ? {} : { verbosity: request.text.verbosity })
  },
  tool_choice: request.tool_choice ?? "auto",
  tools: request.tools,
  truncation: request.truncation ?? "disabled",
  metadata: request.metadata ?? {}
})

export const usageOf = (usage: Usage): ResponseUsage => ({
  input_tokens: usage.prompt_tokens,
  input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
  output_tokens: usage.completion_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.total_tokens
})

/** How an answer ended: the output-token limit makes it incomplete, as OpenAI's API says. */
export const endingOf = (finish: FinishReason | null): Pick<ResponseObject, "status" | "incomplete_details"> =>
  finish === "length" ? { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } } : { status: "completed", incomplete_details: null }

export const citationOf = (annotation: UrlCitationAnnotation): UrlCitation => ({
  type: "url_citation",
  start_index: annotation.url_citation.start_index,
  end_index: annotation.url_citation.end_index,
  title: annotation.url_citation.title,
  url: annotation.url_citation.url
})

/** The search grounding made: "failed" when it found no answer in time or every source failed. */
export const webSearchCall = (
  id: string,
  report: { readonly query: string; readonly retrieval: string },
  sources: ReadonlyArray<SearchResultItem>
): WebSearchCallOutput => ({
  id,
  type: "web_search_call",
  status: report.retrieval === "failed" || report.retrieval === "timeout" ? "failed" : "completed",
  action: { type: "search", query: report.query, queries: [report.query], sources: sources.map((s) => ({ type: "url", url: s.url })) }
})

export const reasoningItem = (id: string, text: string, status: ItemStatus): ReasoningOutput =>
  ({ id, type: "reasoning", summary: [], content: [{ type: "reasoning_text", text }], status })

export const messageItem = (
  id: string,
  text: string,
  annotations: ReadonlyArray<UrlCitation>,
  status: ItemStatus,
  validation?: { readonly valid: boolean; readonly error: string }
): MessageOutput => ({
  id,
  type: "message",
  role: "assistant",
  status,
  content: [{ type: "output_text", text, annotations, logprobs: [] }],
  ...(validation === undefined ? {} : { periscope_validation: validation })
})

export const functionCallItem = (
  id: string,
  call: { readonly id: string; readonly name: string; readonly arguments: string },
  status: ItemStatus,
  validation?: { readonly valid: boolean; readonly error: string }
): FunctionCallOutput => ({
  id,
  type: "function_call",
  call_id: call.id,
  name: call.name,
  arguments: call.arguments,
  status,
  ...(validation === undefined ? {} : { periscope_validation: validation })
})

/** A whole answer (the gateway's first choice: a Responses request asks for one) as a response. */
export const responseOfResult = (result: GatewayResult, shell: ResponseShell, completedAt: number): ResponseObject => {
  const output: Array<OutputItem> = []
  const report = result.periscope_grounding
  if (report !== undefined && report.retrieval !== "skipped") output.push(webSearchCall(itemId("ws_"), report, result.search_results ?? []))
  const choice = result.choices[0]!
  const message = choice.message
  const ending = endingOf(choice.finish_reason)
  const itemStatus: ItemStatus = ending.status === "completed" ? "completed" : "incomplete"
  if (message.reasoning_content !== "") output.push(reasoningItem(itemId("rs_"), message.reasoning_content, "completed"))
  const calls = message.tool_calls ?? []
  if (message.content !== null && (message.content !== "" || calls.length === 0)) {
    output.push(messageItem(itemId("msg_"), message.content, (message.annotations ?? []).map(citationOf), itemStatus, message.periscope_validation))
  }
  for (const call of calls) {
    output.push(functionCallItem(itemId("fc_"), { id: call.id, name: call.function.name, arguments: call.function.arguments }, "completed", call.periscope_validation))
  }
  return {
    ...shell,
    model: result.model,
    ...ending,
    completed_at: ending.status === "completed" ? completedAt : null,
    error: null,
    output,
    usage: usageOf(result.usage),
    ...(report === undefined ? {} : { periscope_grounding: report })
  }
}
