/**
 * Why a choice ended, decided here and nowhere else: the API's set, how the
 * names upstream servers use read in it, and the reason a client sees once
 * the gateway has cut at a stop sequence and judged the tool calls. Whole
 * answers and streams go through the same rule, so they end alike.
 */
import { Schema } from "effect"

/** Why a choice ended, in the set the API answers with (docs/api.md, Chat completions). */
export const FinishReason = Schema.Literals(["stop", "eos", "length", "tool_calls"])
export type FinishReason = typeof FinishReason.Type

/**
 * Servers disagree on names: older OpenAI says function_call, TGI eos_token
 * and stop_sequence, Anthropic-compatible APIs end_turn, max_tokens and
 * tool_use. "error" and "abort" (OpenRouter, vLLM) mean the answer did not
 * end normally, which the caller must see as a failure.
 */
const upstreamNames: Readonly<Record<string, FinishReason | "error">> = {
  stop: "stop",
  eos: "eos",
  eos_token: "eos",
  end_turn: "stop",
  stop_sequence: "stop",
  // A filtered answer ended; the API's set has no reason for it, and the text so far is all there is.
  content_filter: "stop",
  length: "length",
  max_tokens: "length",
  model_length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  tool_use: "tool_calls",
  error: "error",
  abort: "error"
}

/**
 * An upstream's finish_reason in the API's set: null when it gave none (a
 * stream chunk mid-answer), "error" when it says the answer failed; an
 * unknown name reads as stop.
 */
export const fromUpstream = (raw: unknown): FinishReason | "error" | null => {
  if (raw === null || raw === undefined) return null
  if (typeof raw !== "string") return "stop"
  return upstreamNames[raw] ?? "stop"
}

/** How a choice ended, as far as it is known. */
export interface Ending {
  /** What the backend said; undefined or null when it said nothing (a stream left open, a missing field). */
  readonly reported: FinishReason | null | undefined
  /** Tool calls the choice ends with. */
  readonly toolCalls: number
  /** The gateway cut the content at a stop sequence. */
  readonly stopSequence?: boolean | undefined
}

/**
 * The finish_reason a client sees: tool_calls when the choice calls tools
 * (unless it ran out of tokens), stop when a stop sequence cut it, else what
 * the backend said, stop when it said nothing.
 */
export const finishReasonOf = (ending: Ending): FinishReason =>
  ending.toolCalls > 0 && ending.reported !== "length"
    ? "tool_calls"
    : ending.stopSequence === true
    ? "stop"
    : ending.reported ?? "stop"
