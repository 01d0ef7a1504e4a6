/**
 * The embedding and rerank clients against the loopback stand-in: batches and bounded
 * concurrency, vectors placed by index, the key as a bearer token and never in a message,
 * retries after 429 (Retry-After) and 5xx, each failure's reason (a slow server, a failing
 * one, one that is down, a refusal, a wrong shape, vectors of another dimension), and both
 * rerank request shapes.
 */
import { Effect, Exit, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeEmbeddingClient } from "../../core/backends/embeddings/EmbeddingClient.ts"
import { makeRerankClient } from "../../core/backends/embeddings/RerankClient.ts"
import type { ModelServerError } from "../../core/search/Embeddings.ts"
import { type ModelServerStandIn, standInVector, startModelServerStandIn } from "./support/modelServerStandIn.ts"

let server: ModelServerStandIn

beforeAll(async () => {
  server = await startModelServerStandIn({ dimensions: 32 })
})
afterAll(() => server.close())

const reset = () => {
  server.requests.length = 0
  Object.assign(server.behaviour, { dimensions: 32, delayMs: 0, failNext: [], down: false, answerDimensions: undefined, malformed: false, requiredKey: undefined })
}

const client = (overrides: Partial<Parameters<typeof makeEmbeddingClient>[0]> = {}) => ({
  baseUrl: server.baseUrl,
  model: "stand-in-embed",
  batchSize: 8,
  concurrency: 2,
  timeoutMs: 5_000,
  queryTimeoutMs: 200,
  retries: 2,
  ...overrides
})

const run = <A>(effect: Effect.Effect<A, ModelServerError, never>) => Effect.runPromise(effect)
const embed = (texts: ReadonlyArray<string>, purpose: "index" | "query" = "index", overrides: Partial<Parameters<typeof makeEmbeddingClient>[0]> = {}) =>
  Effect.runPromiseExit(Effect.flatMap(makeEmbeddingClient(client(overrides)), (c) => c.embed(texts, purpose)).pipe(Effect.provide(FetchHttpClient.layer)))

const failureOf = (exit: Exit.Exit<unknown, ModelServerError>): ModelServerError => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const error = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (error === undefined || error._tag !== "Fail") throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return error.error
}

describe("the embedding client", () => {
  it("sends texts in batches, some at once, and places each vector by its index", async () => {
    reset()
    server.behaviour.delayMs = 30
    const texts = Array.from({ length: 20 }, (_, i) => `passage number ${i} about topic ${i % 3}`)
    const exit = await embed(texts)
    expect(Exit.isSuccess(exit)).toBe(true)
    const vectors = Exit.isSuccess(exit) ? exit.value : []
    expect(vectors).toHaveLength(20)
    vectors.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(Float32Array.from(standInVector(texts[i]!, 32)))))
    expect(server.requests.map((r) => (r.body.input as Array<string>).length)).toEqual([8, 8, 4])
    expect(server.requests.every((r) => r.path === "/v1/embeddings" && r.body.model === "stand-in-embed")).toBe(true)
    expect(server.maxInFlight()).toBeLessThanOrEqual(2)
  })

  it("sends the key as a bearer token and dimensions when configured", async () => {
    reset()
    server.behaviour.requiredKey = "sk-embed-secret-123456"
    const exit = await embed(["hello"], "index", { apiKey: Redacted.make("sk-embed-secret-123456"), dimensions: 16 })
    expect(Exit.isSuccess(exit) && exit.value[0]!.length).toBe(16)
    expect(server.requests[0]!.authorization).toBe("Bearer sk-embed-secret-123456")
    expect(server.requests[0]!.body.dimensions).toBe(16)
    const refused = failureOf(await embed(["hello"], "index", { apiKey: Redacted.make("sk-wrong-key-9876543") }))
    expect(refused.reason).toBe("unauthorized")
    expect(refused.message).not.toContain("sk-wrong-key-9876543")
  })

  it("retries after 429 with Retry-After and after 503, then answers", async () => {
    reset()
    server.behaviour.failNext = [{ status: 429, retryAfter: "0" }, { status: 503 }]
    const exit = await embed(["a", "b"], "index", { retries: 3 })
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(server.requests).toHaveLength(3)
  })

  it("fails rate limited with the server's wait when the retries run out, and refusals at once with the server's message", async () => {
    reset()
    server.behaviour.failNext = [{ status: 429, retryAfter: "0" }, { status: 429, retryAfter: "0" }, { status: 429, retryAfter: "7" }]
    const limited = failureOf(await embed(["a"], "index", { retries: 2 }))
    expect(limited).toMatchObject({ reason: "rate_limited", status: 429, retryAfterMs: 7000 })
    reset()
    server.behaviour.failNext = [{ status: 400, body: JSON.stringify({ error: { message: "input is too long for this model" } }) }]
    const refused = failureOf(await embed(["a"], "index", { retries: 3 }))
    expect(refused.reason).toBe("refused")
    expect(refused.message).toContain("input is too long for this model")
    expect(server.requests).toHaveLength(1)
  })

  it("gives a search's query its own short timeout, without retries", async () => {
    reset()
    server.behaviour.delayMs = 1_000
    const slow = failureOf(await embed(["query"], "query"))
    expect(slow.reason).toBe("timeout")
    expect(slow.message).toContain("200 ms")
    expect(server.requests).toHaveLength(1)
  })

  it("says a server that drops connections is unavailable, and an answer of the wrong shape or dimension is a bad response", async () => {
    reset()
    server.behaviour.down = true
    expect(failureOf(await embed(["a"], "index", { retries: 1 })).reason).toBe("unavailable")
    reset()
    server.behaviour.malformed = true
    expect(failureOf(await embed(["a"])).message).toMatch(/no data array/)
    reset()
    server.behaviour.answerDimensions = 24
    const wrong = failureOf(await embed(["a"], "index", { dimensions: 32 }))
    expect(wrong.reason).toBe("bad_response")
    expect(wrong.message).toMatch(/24 dimensions, search.embeddings.dimensions says 32/)
  })
})

describe("the rerank client", () => {
  const rerank = (api: "cohere" | "tei", documents: ReadonlyArray<string>, topN?: number) =>
    run(Effect.flatMap(makeRerankClient({ url: `${server.url}${api === "tei" ? "/tei/rerank" : "/rerank"}`, model: "stand-in-rerank", api, timeoutMs: 2_000, retries: 0 }), (c) =>
      c.rerank("red apples", documents, topN)).pipe(Effect.provide(FetchHttpClient.layer)))

  it("sends Cohere's and TEI's request shapes and reads both answers, most relevant first", async () => {
    reset()
    const documents = ["green pears", "red apples in a bowl", "apples"]
    const cohere = await rerank("cohere", documents, 2)
    expect(cohere.map((s) => s.index)).toEqual([1, 2])
    expect(server.requests[0]!.body).toEqual({ model: "stand-in-rerank", query: "red apples", documents, top_n: 2 })
    const tei = await rerank("tei", documents)
    expect(tei.map((s) => s.index)).toEqual([1, 2, 0])
    expect(server.requests[1]!.body).toEqual({ query: "red apples", texts: documents, raw_scores: false })
  })
})
