/**
 * What a chat model answers: whole completions (chat.completion) and stream chunks
 * (OpenAI chat.completion.chunk). Backends produce the domain shapes
 * (`ChatResult`, `ChatChunk`); the API layer adds id, created and object.
 */
import { Schema } from "effect"
import { ToolCall } from "./ChatRequest.ts"
import { FinishReason } from "./FinishReason.ts"

export const Usage = Schema.Struct({
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  total_tokens: Schema.Int
})
export type Usage = typeof Usage.Type

/** A tool call in an answer; `periscope_validation` is set when it failed validation under the "pass" policy. */
export const AnswerToolCall = Schema.Struct({
  ...ToolCall.fields,
  periscope_validation: Schema.optionalKey(Schema.Struct({ valid: Schema.Boolean, error: Schema.String }))
})
export type AnswerToolCall = typeof AnswerToolCall.Type

/** A citation in grounded answers (OpenAI's shape): the span of `content` that cites `url`, UTF-16 units, end exclusive. */
export const UrlCitationAnnotation = Schema.Struct({
  type: Schema.Literal("url_citation"),
  url_citation: Schema.Struct({ start_index: Schema.Int, end_index: Schema.Int, title: Schema.String, url: Schema.String })
})
export type UrlCitationAnnotation = typeof UrlCitationAnnotation.Type

/** A source of a grounded answer, listed at the top level (Perplexity's `search_results`). */
export const SearchResultItem = Schema.Struct({
  title: Schema.String,
  url: Schema.String,
  snippet: Schema.String,
  date: Schema.NullOr(Schema.String)
})
export type SearchResultItem = typeof SearchResultItem.Type

/** What grounding did for an answer: Periscope's extension beside `usage`. */
export const GroundingReport = Schema.Struct({
  query: Schema.String,
  search_context_size: Schema.Literals(["low", "medium", "high"]),
  /** ok, no_results, timeout (the retrieval deadline passed), failed (every source failed), skipped (tools only). */
  retrieval: Schema.Literals(["ok", "no_results", "timeout", "failed", "skipped"]),
  sources: Schema.Int,
  pages_read: Schema.Int,
  /** Citation markers that named no retrieved source, removed from the text (all choices). */
  citations_removed: Schema.Int,
  tool_rounds: Schema.Int,
  tool_calls: Schema.Int,
  tool_limit_reached: Schema.Boolean,
  note: Schema.optionalKey(Schema.String)
})
export type GroundingReport = typeof GroundingReport.Type

export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  /** null when the model only called tools (as OpenAI answers). */
  content: Schema.NullOr(Schema.String),
  reasoning_content: Schema.String,
  tool_calls: Schema.optionalKey(Schema.Array(AnswerToolCall)),
  /** Grounded answers: one url_citation per verified citation marker. */
  annotations: Schema.optionalKey(Schema.Array(UrlCitationAnnotation)),
  /** Set when the content failed the response format under the "pass" policy. */
  periscope_validation: Schema.optionalKey(Schema.Struct({ valid: Schema.Boolean, error: Schema.String }))
})
export type AssistantMessage = typeof AssistantMessage.Type

export const ChatChoice = Schema.Struct({
  index: Schema.Int,
  message: AssistantMessage,
  finish_reason: FinishReason,
  logprobs: Schema.Null
})
export type ChatChoice = typeof ChatChoice.Type

/** A backend's whole answer; the pipeline counts usage when a backend reports none. */
export interface ChatResult {
  readonly model: string
  readonly choices: ReadonlyArray<ChatChoice>
  readonly usage?: Usage | undefined
  /** Grounded answers: the sources given to the model. */
  readonly search_results?: ReadonlyArray<SearchResultItem> | undefined
  readonly periscope_grounding?: GroundingReport | undefined
}

/** The wire response, OpenAI-compatible (docs/api.md, Chat completions). */
export const ChatCompletionResponse = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion"),
  /** Unix time in seconds, as OpenAI sends it. */
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Array(ChatChoice),
  /** The first choice's tool calls, repeated at the top level (docs/api.md, Chat completions). */
  tool_calls: Schema.optionalKey(Schema.Array(AnswerToolCall)),
  usage: Usage,
  search_results: Schema.optionalKey(Schema.Array(SearchResultItem)),
  periscope_grounding: Schema.optionalKey(GroundingReport)
}).annotate({ identifier: "ChatCompletionResponse" })
export type ChatCompletionResponse = typeof ChatCompletionResponse.Type

// --- streaming ----------------------------------------------------------------

export const ToolCallDelta = Schema.Struct({
  index: Schema.Int,
  id: Schema.optionalKey(Schema.String),
  type: Schema.optionalKey(Schema.Literal("function")),
  function: Schema.optionalKey(Schema.Struct({
    name: Schema.optionalKey(Schema.String),
    arguments: Schema.optionalKey(Schema.String)
  })),
  periscope_validation: Schema.optionalKey(Schema.Struct({ valid: Schema.Boolean, error: Schema.String }))
})
export type ToolCallDelta = typeof ToolCallDelta.Type

export const ChunkDelta = Schema.Struct({
  role: Schema.optionalKey(Schema.Literal("assistant")),
  content: Schema.optionalKey(Schema.NullOr(Schema.String)),
  reasoning_content: Schema.optionalKey(Schema.String),
  tool_calls: Schema.optionalKey(Schema.Array(ToolCallDelta)),
  /** Grounded streams: on each choice's finishing chunk, every citation of the streamed content. */
  annotations: Schema.optionalKey(Schema.Array(UrlCitationAnnotation))
})
export type ChunkDelta = typeof ChunkDelta.Type

export const ChunkChoice = Schema.Struct({
  index: Schema.Int,
  delta: ChunkDelta,
  finish_reason: Schema.NullOr(FinishReason),
  logprobs: Schema.optionalKey(Schema.Null),
  /** On a finish chunk: the streamed content failed the response format under the "pass" policy. */
  periscope_validation: Schema.optionalKey(Schema.Struct({ valid: Schema.Boolean, error: Schema.String }))
})
export type ChunkChoice = typeof ChunkChoice.Type

/** A backend's stream element: choice deltas, and usage on the last one. */
export interface ChatChunk {
  readonly choices: ReadonlyArray<ChunkChoice>
  readonly usage?: Usage | undefined
  /**
   * Grounded streams: on a first chunk without choices once the search before the answer is done
   * (the report so far), and on the last one (final); chat shows the last on its last chunk before [DONE].
   */
  readonly search_results?: ReadonlyArray<SearchResultItem> | undefined
  readonly periscope_grounding?: GroundingReport | undefined
}

export const ChatCompletionChunk = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion.chunk"),
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Array(ChunkChoice),
  usage: Schema.optionalKey(Schema.NullOr(Usage)),
  search_results: Schema.optionalKey(Schema.Array(SearchResultItem)),
  periscope_grounding: Schema.optionalKey(GroundingReport)
}).annotate({ identifier: "ChatCompletionChunk" })
export type ChatCompletionChunk = typeof ChatCompletionChunk.Type

// --- models -------------------------------------------------------------------

export const ModelInfo = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("model"),
  created: Schema.Int,
  owned_by: Schema.String,
  /** Set on an alias: the configured model it answers as (answers carry that name in `model`). */
  periscope_alias_of: Schema.optionalKey(Schema.String)
})
export type ModelInfo = typeof ModelInfo.Type

export const ModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(ModelInfo)
}).annotate({ identifier: "ModelList" })
export type ModelList = typeof ModelList.Type
