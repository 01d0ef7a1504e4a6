import { Context, type Effect, type Stream } from "effect"
import type { ChatChunk, ChatResult, ModelInfo } from "./ChatCompletion.ts"
import type { ChatModelError } from "./ChatError.ts"
import type { ChatRequest } from "./ChatRequest.ts"

/**
 * A chat model: whole completions and streams of chunks. Backends (scripted,
 * OpenAI-compatible upstreams, the grounded model) are Layers providing it.
 * A stream's consumer going away interrupts it, which must cancel the backend's work.
 */
export class ChatModel extends Context.Service<ChatModel, {
  /** The models this backend serves, for GET /v1/models. */
  readonly models: Effect.Effect<ReadonlyArray<ModelInfo>>
  /** The model a request without `model` uses. */
  readonly defaultModel: string
  /** Whether the backend answers n > 1 itself for this model; otherwise the pipeline fans out. */
  readonly supportsN: (model: string) => boolean
  /** Whether a model name is served (the gateway reads `x:online` as `x` only when `x:online` is not); absent: any name. */
  readonly hasModel?: ((model: string) => boolean) | undefined
  complete(request: ChatRequest): Effect.Effect<ChatResult, ChatModelError>
  stream(request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError>
}>()("periscope/chat/ChatModel") {}
