/**
 * Declarative parameter maps for the OpenAI-compatible servers people run,
 * one per server family. A target's `params` is one of these, possibly with
 * overrides from configuration (`withOverrides`). Each rule says why it exists:
 * a field a server rejects is dropped, a field it reads under another name is
 * renamed, a range it refuses is clamped.
 */
import type { ParameterMap, ParamRule } from "../../chat/Upstream.ts"

export const presetNames = ["openai", "vllm", "ollama", "llamacpp", "passthrough"] as const
export type PresetName = typeof presetNames[number]

export const parameterPresets: Readonly<Record<PresetName, ParameterMap>> = {
  openai: {
    // OpenAI answers 400 "Unrecognized request argument supplied: top_k".
    top_k: { drop: true },
    // max_tokens is deprecated there and refused by the o-series reasoning models.
    max_tokens: { rename: "max_completion_tokens" }
  },
  // vLLM reads every OpenAI field and top_k as an extra sampling parameter.
  vllm: {},
  ollama: {
    // The /v1 endpoint does not read top_k (only a Modelfile or the native API sets it):
    // dropping it keeps the request honest about what is applied.
    top_k: { drop: true },
    // It answers one choice whatever n says: the pipeline fans out instead (supportsN false).
    n: { drop: true }
  },
  llamacpp: {
    // llama-server answers 400 "Only one completion choice is allowed" for n > 1.
    // top_k is a native llama.cpp sampler and is read as is.
    n: { drop: true }
  },
  // Every field as the client sent it (after Periscope's defaults).
  passthrough: {}
}

/** Whether servers of each family answer n > 1 themselves (the default for a target's supportsN). */
export const presetSupportsN: Readonly<Record<PresetName, boolean>> = {
  openai: true,
  vllm: true,
  ollama: false,
  llamacpp: false,
  passthrough: true
}

/** A preset with per-field rules from configuration laid over it (a rule replaces the preset's rule). */
export const withOverrides = (preset: PresetName, overrides: ParameterMap = {}): ParameterMap => {
  const merged: Record<string, ParamRule> = { ...parameterPresets[preset] }
  for (const [field, rule] of Object.entries(overrides)) if (rule !== undefined) merged[field] = rule
  return merged as ParameterMap
}
