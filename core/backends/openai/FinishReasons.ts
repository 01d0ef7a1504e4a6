/**
 * Upstream finish reasons mapped into the spec's set (stop, eos, length,
 * tool_calls). Servers disagree on names: older OpenAI says function_call,
 * TGI eos_token and stop_sequence, Anthropic-compatible APIs end_turn,
 * max_tokens and tool_use. "error" and "abort" (OpenRouter, vLLM) mean the
 * answer did not end normally, which the caller must see as a failure.
 */
import type { FinishReason } from "../../chat/ChatCompletion.ts"

const known: Readonly<Record<string, FinishReason | "error">> = {
  stop: "stop",
  eos: "eos",
  eos_token: "eos",
  end_turn: "stop",
  stop_sequence: "stop",
  // A filtered answer ended; the spec has no reason for it, and the text so far is all there is.
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
 * null when the upstream gave none (a stream chunk mid-answer); "error" when
 * the upstream says the answer failed; an unknown name reads as stop.
 */
export const mapFinishReason = (raw: unknown): FinishReason | "error" | null => {
  if (raw === null || raw === undefined) return null
  if (typeof raw !== "string") return "stop"
  return known[raw] ?? "stop"
}
