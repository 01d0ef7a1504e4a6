/**
 * The JSON body sent to an OpenAI-compatible upstream for one ChatRequest:
 * the target's model name, the forwarded fields after the target's parameter
 * map, and the messages as the client sent them minus reasoning_content.
 */
import type { ChatMessage, ChatRequest } from "../../chat/ChatRequest.ts"
import { ForwardedParams, type ParameterMap, type RequestDefaults } from "../../chat/Upstream.ts"

/** Reasoning from earlier turns is ours to keep: DeepSeek-style servers answer 400 when it is sent back. */
const withoutReasoning = (message: ChatMessage): ChatMessage => {
  if (message.reasoning_content === undefined) return message
  const { reasoning_content: _dropped, ...rest } = message
  return rest
}

const clamp = (value: number, min: number | undefined, max: number | undefined): number =>
  min !== undefined && value < min ? min : max !== undefined && value > max ? max : value

/**
 * `streaming` decides `stream` (the caller picks complete or stream, whatever
 * request.stream says); streams always ask for the usage chunk. With
 * `defaults` "upstream", fields holding Periscope's default the client did not
 * send stay out, so the model server's own defaults apply.
 */
export const upstreamBody = (
  model: string,
  params: ParameterMap,
  request: ChatRequest,
  streaming: boolean,
  defaults: RequestDefaults = "spec"
): Record<string, unknown> => {
  const body: Record<string, unknown> = { model, messages: request.messages.map(withoutReasoning) }
  const leftOut: ReadonlyArray<string> = defaults === "upstream" ? request.defaulted ?? [] : []
  for (const field of ForwardedParams) {
    let value: unknown = request[field]
    if (value === undefined) continue
    if (leftOut.length > 0 && leftOut.includes(field)) continue
    // n = 1 and an empty stop list are every server's default; leaving them out spares servers that refuse them.
    if (field === "n" && value === 1) continue
    if (field === "stop" && Array.isArray(value) && value.length === 0) continue
    const rule = params[field]
    if (rule?.drop === true) continue
    if (typeof value === "number") value = clamp(value, rule?.min, rule?.max)
    body[rule?.rename ?? field] = value
  }
  body.stream = streaming
  if (streaming) body.stream_options = { include_usage: true }
  return body
}
