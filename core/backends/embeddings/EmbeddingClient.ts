/**
 * TextEmbedder over an OpenAI-compatible `/v1/embeddings` server: Ollama, vLLM, Text
 * Embeddings Inference (its OpenAI route) and OpenAI itself all take `{model, input: [texts],
 * dimensions?}` and answer `{data: [{index, embedding: [floats]}]}`. Texts go in batches,
 * `concurrency` batches at a time; a search's query gets its own short timeout and no retry
 * (a search that waits longer answers from BM25 alone).
 */
import { Effect, Layer, type Redacted } from "effect"
import type { HttpClient } from "effect/http"
import { type EmbeddingPurpose, ModelServerError, TextEmbedder } from "../../search/Embeddings.ts"
import { postJson } from "./ModelServerCall.ts"

export interface EmbeddingClientSettings {
  /** The API base (…/v1): requests go to `<baseUrl>/embeddings`. */
  readonly baseUrl: string
  readonly model: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly dimensions?: number | undefined
  readonly batchSize: number
  readonly concurrency: number
  readonly timeoutMs: number
  readonly queryTimeoutMs: number
  readonly retries: number
}

export const defaultEmbeddingClientSettings = { batchSize: 32, concurrency: 2, timeoutMs: 60_000, queryTimeoutMs: 2_000, retries: 3 } as const

/** `<baseUrl>/embeddings`. */
export const embeddingsUrl = (baseUrl: string): string => `${baseUrl.replace(/\/+$/, "")}/embeddings`

const badResponse = (message: string) => new ModelServerError({ server: "embeddings", reason: "bad_response", message })

/** The vectors of an answer for `count` texts, in input order; undefined with the reason when it is not the documented shape. */
export const vectorsOfAnswer = (answer: unknown, count: number, dimensions: number | undefined): Array<Float32Array> | string => {
  const data = (answer as { readonly data?: unknown } | null)?.data
  if (!Array.isArray(data)) return "the answer has no data array"
  if (data.length !== count) return `the answer has ${data.length} embeddings for ${count} inputs`
  const out = new Array<Float32Array | undefined>(count)
  for (let i = 0; i < data.length; i++) {
    const item = data[i] as { readonly index?: unknown; readonly embedding?: unknown } | null
    const index = typeof item?.index === "number" ? item.index : i
    const embedding = item?.embedding
    if (!Number.isInteger(index) || index < 0 || index >= count || out[index] !== undefined) return `data[${i}].index is missing, out of range or repeated`
    if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === "number" && Number.isFinite(x))) {
      return `data[${i}].embedding is not an array of numbers (set no encoding_format, or "float")`
    }
    out[index] = Float32Array.from(embedding as Array<number>)
  }
  const length = out[0]!.length
  for (let i = 0; i < count; i++) {
    if (out[i]!.length !== length) return `the embeddings have different lengths (${length} and ${out[i]!.length})`
  }
  if (dimensions !== undefined && length !== dimensions) return `the embeddings have ${length} dimensions, search.embeddings.dimensions says ${dimensions}`
  return out as Array<Float32Array>
}

/** TextEmbedder over the server of `settings`, through the HttpClient in context. */
export const makeEmbeddingClient = (settings: EmbeddingClientSettings) =>
  Effect.map(Effect.context<HttpClient.HttpClient>(), (context) => {
    const url = embeddingsUrl(settings.baseUrl)
    const target = (purpose: EmbeddingPurpose) => ({
      server: "embeddings",
      url,
      apiKey: settings.apiKey,
      timeoutMs: purpose === "query" ? settings.queryTimeoutMs : settings.timeoutMs,
      retries: purpose === "query" ? 0 : settings.retries
    })
    const requestBody = (input: ReadonlyArray<string> | unknown) => ({
      model: settings.model,
      input,
      ...(settings.dimensions === undefined ? {} : { dimensions: settings.dimensions })
    })
    const batch = (texts: ReadonlyArray<string>, purpose: EmbeddingPurpose) =>
      Effect.flatMap(postJson(target(purpose), requestBody(texts)), (answer) => {
        const vectors = vectorsOfAnswer(answer, texts.length, settings.dimensions)
        return typeof vectors === "string" ? Effect.fail(badResponse(`the embeddings server's answer: ${vectors}`)) : Effect.succeed(vectors)
      })
    const embed = (texts: ReadonlyArray<string>, purpose: EmbeddingPurpose): Effect.Effect<Array<Float32Array>, ModelServerError> => {
      const batches: Array<ReadonlyArray<string>> = []
      for (let i = 0; i < texts.length; i += settings.batchSize) batches.push(texts.slice(i, i + settings.batchSize))
      return Effect.forEach(batches, (texts) => batch(texts, purpose), { concurrency: settings.concurrency }).pipe(
        Effect.map((parts) => parts.flat()),
        Effect.provideContext(context)
      )
    }
    // A caller of /v1/embeddings retries itself: its 429 reaches it at once, with the server's wait.
    const passThrough = (body: Readonly<Record<string, unknown>>) =>
      postJson({ ...target("index"), retries: 0 }, { ...body, model: settings.model }).pipe(Effect.provideContext(context))
    return TextEmbedder.of({ model: settings.model, dimensions: settings.dimensions, embed, passThrough })
  })

export const EmbeddingClient = {
  /** TextEmbedder over the configured server. */
  layer: (settings: EmbeddingClientSettings): Layer.Layer<TextEmbedder, never, HttpClient.HttpClient> =>
    Layer.effect(TextEmbedder, makeEmbeddingClient(settings))
} as const
