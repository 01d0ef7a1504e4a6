/**
 * What POST /v1/responses answers, as Schemas (the document shows them, the types come from them):
 * the response object, its output items (web_search_call, reasoning, message, function_call) and,
 * for `stream: true`, the events that build it. Shapes as OpenAI's SDK reads them
 * (node_modules/openai/resources/responses/responses.d.ts and lib/responses/ResponseStream).
 */
import { Schema } from "effect"
import { GroundingReport } from "../../chat/ChatCompletion.ts"
import { AllowedToolsChoice, FunctionChoice, FunctionTool, JsonObjectFormat, JsonSchemaFormat, TextFormat, WebSearchChoice, WebSearchTool } from "./ResponsesRequest.ts"

const { optionalKey } = Schema

export const ItemStatus = Schema.Literals(["in_progress", "completed", "incomplete"])
export type ItemStatus = typeof ItemStatus.Type

/** A citation of a retrieved source: the span of the text that cites it (UTF-16 units, end exclusive). */
export const UrlCitation = Schema.Struct({
  type: Schema.Literal("url_citation"),
  start_index: Schema.Int,
  end_index: Schema.Int,
  title: Schema.String,
  url: Schema.String
})
export type UrlCitation = typeof UrlCitation.Type

export const OutputText = Schema.Struct({
  type: Schema.Literal("output_text"),
  text: Schema.String,
  annotations: Schema.Array(UrlCitation),
  logprobs: Schema.Array(Schema.Never)
})
export type OutputText = typeof OutputText.Type

/** Set on an item whose content or arguments failed validation under the gateway's "pass" policy. */
const Validation = Schema.Struct({ valid: Schema.Boolean, error: Schema.String })

export const MessageOutput = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("message"),
  role: Schema.Literal("assistant"),
  status: ItemStatus,
  content: Schema.Array(OutputText),
  periscope_validation: optionalKey(Validation)
})
export type MessageOutput = typeof MessageOutput.Type

export const WebSearchCallOutput = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("web_search_call"),
  status: Schema.Literals(["in_progress", "searching", "completed", "failed"]),
  action: Schema.Struct({
    type: Schema.Literal("search"),
    query: Schema.String,
    queries: Schema.Array(Schema.String),
    /** The pages the search gave the model, in the order it numbered them. */
    sources: Schema.Array(Schema.Struct({ type: Schema.Literal("url"), url: Schema.String }))
  })
})
export type WebSearchCallOutput = typeof WebSearchCallOutput.Type

export const FunctionCallOutput = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function_call"),
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String,
  status: ItemStatus,
  periscope_validation: optionalKey(Validation)
})
export type FunctionCallOutput = typeof FunctionCallOutput.Type

/** A model's reasoning as text (the reasoning_content of OpenAI-compatible servers). */
export const ReasoningOutput = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("reasoning"),
  summary: Schema.Array(Schema.Never),
  content: Schema.Array(Schema.Struct({ type: Schema.Literal("reasoning_text"), text: Schema.String })),
  status: ItemStatus
})
export type ReasoningOutput = typeof ReasoningOutput.Type

export const OutputItem = Schema.Union([WebSearchCallOutput, ReasoningOutput, MessageOutput, FunctionCallOutput]).annotate({ identifier: "ResponseOutputItem" })
export type OutputItem = typeof OutputItem.Type

export const ResponseUsage = Schema.Struct({
  input_tokens: Schema.Int,
  input_tokens_details: Schema.Struct({ cached_tokens: Schema.Int, cache_write_tokens: Schema.Int }),
  output_tokens: Schema.Int,
  output_tokens_details: Schema.Struct({ reasoning_tokens: Schema.Int }),
  total_tokens: Schema.Int
})
export type ResponseUsage = typeof ResponseUsage.Type

export const ResponseStatus = Schema.Literals(["in_progress", "completed", "incomplete", "failed"])

export const ResponseObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("response"),
  /** Unix time in seconds. */
  created_at: Schema.Int,
  status: ResponseStatus,
  completed_at: Schema.NullOr(Schema.Int),
  /** Set when status is failed: what ended the answer. */
  error: Schema.NullOr(Schema.Struct({ code: Schema.String, message: Schema.String })),
  /** Set when status is incomplete: the output-token limit or a content filter cut the answer. */
  incomplete_details: Schema.NullOr(Schema.Struct({ reason: Schema.Literals(["max_output_tokens", "content_filter"]) })),
  instructions: Schema.NullOr(Schema.String),
  max_output_tokens: Schema.NullOr(Schema.Int),
  max_tool_calls: Schema.NullOr(Schema.Int),
  model: Schema.String,
  output: Schema.Array(OutputItem),
  parallel_tool_calls: Schema.Boolean,
  previous_response_id: Schema.Null,
  /** Nothing is stored on this server. */
  store: Schema.Literal(false),
  background: Schema.Literal(false),
  /** As asked; null: the model's own default. */
  temperature: Schema.NullOr(Schema.Number),
  top_p: Schema.NullOr(Schema.Number),
  text: Schema.Struct({
    format: Schema.Union([TextFormat, JsonObjectFormat, JsonSchemaFormat]),
    verbosity: optionalKey(Schema.NullOr(Schema.Literals(["low", "medium", "high"])))
  }),
  tool_choice: Schema.Union([Schema.Literals(["none", "auto", "required"]), FunctionChoice, AllowedToolsChoice, WebSearchChoice]),
  tools: Schema.Array(Schema.Union([FunctionTool, WebSearchTool])),
  truncation: Schema.Literals(["auto", "disabled"]),
  /** Null until the answer is complete (the events before response.completed). */
  usage: Schema.NullOr(ResponseUsage),
  metadata: Schema.Record(Schema.String, Schema.String),
  /** What grounding did (Periscope's report, as chat completions give it). */
  periscope_grounding: optionalKey(GroundingReport)
}).annotate({ identifier: "Response" })
export type ResponseObject = typeof ResponseObject.Type

// --- stream events --------------------------------------------------------------

const seq = { sequence_number: Schema.Int }
const at = { item_id: Schema.String, output_index: Schema.Int }
const inPart = { ...at, content_index: Schema.Int }

const lifecycle = <T extends string>(type: T) => Schema.Struct({ type: Schema.Literal(type), ...seq, response: ResponseObject })
const itemEvent = <T extends string>(type: T) => Schema.Struct({ type: Schema.Literal(type), ...seq, output_index: Schema.Int, item: OutputItem })
const searchEvent = <T extends string>(type: T) => Schema.Struct({ type: Schema.Literal(type), ...seq, ...at })
const ReasoningTextPart = Schema.Struct({ type: Schema.Literal("reasoning_text"), text: Schema.String })

export const ResponseStreamEvent = Schema.Union([
  lifecycle("response.created"),
  lifecycle("response.in_progress"),
  lifecycle("response.completed"),
  lifecycle("response.incomplete"),
  lifecycle("response.failed"),
  itemEvent("response.output_item.added"),
  itemEvent("response.output_item.done"),
  searchEvent("response.web_search_call.in_progress"),
  searchEvent("response.web_search_call.searching"),
  searchEvent("response.web_search_call.completed"),
  Schema.Struct({ type: Schema.Literal("response.content_part.added"), ...seq, ...inPart, part: Schema.Union([OutputText, ReasoningTextPart]) }),
  Schema.Struct({ type: Schema.Literal("response.content_part.done"), ...seq, ...inPart, part: Schema.Union([OutputText, ReasoningTextPart]) }),
  Schema.Struct({ type: Schema.Literal("response.output_text.delta"), ...seq, ...inPart, delta: Schema.String, logprobs: Schema.Array(Schema.Never) }),
  Schema.Struct({ type: Schema.Literal("response.output_text.done"), ...seq, ...inPart, text: Schema.String, logprobs: Schema.Array(Schema.Never) }),
  Schema.Struct({ type: Schema.Literal("response.output_text.annotation.added"), ...seq, ...inPart, annotation_index: Schema.Int, annotation: UrlCitation }),
  Schema.Struct({ type: Schema.Literal("response.reasoning_text.delta"), ...seq, ...inPart, delta: Schema.String }),
  Schema.Struct({ type: Schema.Literal("response.reasoning_text.done"), ...seq, ...inPart, text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("response.function_call_arguments.delta"), ...seq, ...at, delta: Schema.String }),
  Schema.Struct({ type: Schema.Literal("response.function_call_arguments.done"), ...seq, ...at, arguments: Schema.String }),
  /** A failure after a keep-alive comment opened the stream but before its first event (OpenAI's error event). */
  Schema.Struct({ type: Schema.Literal("error"), ...seq, code: Schema.NullOr(Schema.String), message: Schema.String, param: Schema.NullOr(Schema.String) })
]).annotate({ identifier: "ResponseStreamEvent" })
export type ResponseStreamEvent = typeof ResponseStreamEvent.Type
