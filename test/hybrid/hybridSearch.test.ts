/**
 * Hybrid retrieval end to end against the loopback stand-in: an index run's embedding step
 * (and a rebuild that sends only what changed), a server whose webSearch finds by vector what
 * BM25 cannot, answers from BM25 with a note when the embedding server is down or slow, the
 * reranker's order, vectors of another model refused at load, and /v1/embeddings and /v1/rerank
 * passed through with keys.
 */
import { Effect, Exit, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPeriscope } from "../../adapters/embed/index.ts"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { appLayer } from "../../core/app/Application.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { EmbeddingClient } from "../../core/backends/embeddings/EmbeddingClient.ts"
import { embedIndex } from "../../core/backends/embeddings/EmbedIndex.ts"
import { EngineSearch, SearchEngine } from "../../core/backends/EngineSearch.ts"
import { defaultHybridSearchSettings, HybridSearch } from "../../core/backends/HybridSearch.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import type { ConfigFile } from "../../core/config/ConfigFile.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { WebSearch } from "../../core/search/WebSearch.ts"
import { type InProcessServer, serveInProcess, TEST_KEY } from "../support/servers.ts"
import { type ModelServerStandIn, startModelServerStandIn } from "./support/modelServerStandIn.ts"

const concepts = { automobile: "car", car: "car", cars: "car", vehicle: "car", fruit: "fruit", apples: "fruit", pears: "fruit" }

const documents: Array<IndexDocument> = [
  { url: "https://cars.example/garage", title: "Parking", text: "Drivers park the car in a garage at night. A garage keeps the rain off." },
  { url: "https://cars.example/engine", title: "Engines", text: "An engine turns fuel into motion; cars need oil changes." },
  { url: "https://orchard.example/", title: "Orchard", text: "Apples and pears grow on trees in the orchard every autumn." },
  { url: "https://boats.example/", title: "Boats", text: "A boat floats on water; sailors steer it with a rudder and a garage of spare sails." }
]

const build = (docs: ReadonlyArray<IndexDocument>): SearchIndex => {
  const builder = new IndexBuilder()
  builder.add(docs)
  return builder.build()
}

let standIn: ModelServerStandIn

const embedWith = (index: SearchIndex, previous: SearchIndex | undefined, model = "stand-in-embed") =>
  Effect.runPromise(
    embedIndex(index, { model, passageChars: 1000, maxPassages: 8, documentPrefix: "passage: " }, previous?.parts.vectors).pipe(
      Effect.provide(EmbeddingClient.layer({ baseUrl: standIn.baseUrl, model, batchSize: 2, concurrency: 2, timeoutMs: 5_000, queryTimeoutMs: 1_000, retries: 1 })),
      Effect.provide(FetchHttpClient.layer)
    )
  )

beforeAll(async () => {
  standIn = await startModelServerStandIn({ dimensions: 48, concepts })
})
afterAll(() => standIn.close())

describe("the embedding step of an index run", () => {
  it("embeds every passage once, then a rebuild sends only what changed (and everything for another model)", async () => {
    standIn.requests.length = 0
    const first = await embedWith(build(documents), undefined)
    expect(first.report).toMatchObject({ passages: 4, embedded: 4, reused: 0, dimensions: 48, model: "stand-in-embed" })
    expect(standIn.embeddedTexts().every((t) => t.startsWith("passage: "))).toBe(true)
    expect(standIn.requests.map((r) => (r.body.input as Array<string>).length)).toEqual([2, 2])
    standIn.requests.length = 0
    const changed = documents.map((d) => (d.url === "https://orchard.example/" ? { ...d, text: "Cherries ripen in June in the orchard." } : d))
    const second = await embedWith(build(changed), first.index)
    expect(second.report).toMatchObject({ passages: 4, embedded: 1, reused: 3 })
    expect(standIn.embeddedTexts()).toEqual(["passage: Orchard\nCherries ripen in June in the orchard."])
    // The reused vectors are the stored ones, byte for byte.
    const a = first.index.parts.vectors!
    const b = second.index.parts.vectors!
    const garage = (v: typeof a) => {
      const slot = Array.from(v.arrays.page).indexOf(1)
      return Array.from(v.arrays.values.subarray(slot * 48, slot * 48 + 48))
    }
    expect(garage(b)).toEqual(garage(a))
    standIn.requests.length = 0
    const other = await embedWith(build(changed), second.index, "another-model")
    expect(other.report).toMatchObject({ embedded: 4, reused: 0 })
  })
})

describe("a server with hybrid retrieval", () => {
  let server: InProcessServer
  let snapshot: Uint8Array

  const serve = (search: NonNullable<ConfigFile["search"]>, bytes = snapshot) =>
    serveInProcess(
      appLayer(settingsOf({ search }), recordsFromPlainKeys([TEST_KEY]), {
        search: { _tag: "EngineBytes", bytes },
        chatModel: ScriptedChat.layer(unconfiguredChat)
      }).pipe(Layer.provide(nodePlatform), Layer.orDie)
    )

  const embeddings = () => ({ baseUrl: standIn.baseUrl, model: "stand-in-embed", documentPrefix: "passage: ", queryTimeoutMs: 300 })

  const post = async (path: string, body: unknown, key: string | null = TEST_KEY) => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: (await response.json()) as Record<string, any> }
  }
  const links = (body: Record<string, any>) => (body.data.organic as Array<{ link: string }>).map((r) => r.link)

  beforeAll(async () => {
    snapshot = encodeSnapshot((await embedWith(build(documents), undefined)).index)
    server = await serve({ embeddings: embeddings(), reranker: { url: `${standIn.url}/rerank`, model: "stand-in-rerank" } })
  })
  afterAll(() => server.close())

  it("finds by vector a page no word of the query is on", async () => {
    Object.assign(standIn.behaviour, { down: false, delayMs: 0 })
    const { status, body } = await post("/api/search/webSearch", { keywords: "automobile", num: 3, explain: true })
    expect(status).toBe(200)
    expect(links(body).slice(0, 2).sort()).toEqual(["https://cars.example/engine", "https://cars.example/garage"])
    expect(body.extra.sources[0].notes).toEqual([
      "hybrid: BM25F fused with the nearest passages of stand-in-embed (rrf)",
      "reranked: the best 4 by stand-in-rerank"
    ])
  })

  it("reorders the best results by the reranker", async () => {
    standIn.requests.length = 0
    const { body } = await post("/api/search/webSearch", { keywords: "garage rain", num: 3 })
    const rerank = standIn.requests.find((r) => r.path === "/rerank")
    expect(rerank?.body).toMatchObject({ model: "stand-in-rerank", query: "garage rain" })
    expect(links(body)[0]).toBe("https://cars.example/garage")
  })

  it("keeps the fused order when the reranker fails, and says so", async () => {
    const fused = await post("/api/search/webSearch", { keywords: "garage rain", num: 3, explain: true })
    standIn.behaviour.failNextRerank = [{ status: 503 }]
    const { status, body } = await post("/api/search/webSearch", { keywords: "garage rain", num: 3, explain: true })
    expect(status).toBe(200)
    expect(body.extra.sources[0].notes).toContainEqual(expect.stringMatching(/^reranking skipped, fused order kept: the reranker server answered 503/))
    expect(links(body)).toHaveLength(fused.body.data.organic.length)
    standIn.behaviour.failNextRerank = []
  })

  it("answers from BM25 when the embedding server is down or slow, and says so when asked", async () => {
    try {
      for (const behaviour of [{ down: true, delayMs: 0 }, { down: false, delayMs: 2_000 }]) {
        Object.assign(standIn.behaviour, behaviour)
        const { status, body } = await post("/api/search/webSearch", { keywords: "engine oil", num: 3, explain: true })
        expect(status).toBe(200)
        expect(links(body)[0]).toBe("https://cars.example/engine")
        expect(JSON.stringify(body.extra)).toMatch(/hybrid retrieval skipped, BM25 results only: the embeddings server/)
      }
    } finally {
      Object.assign(standIn.behaviour, { down: false, delayMs: 0 })
    }
  })

  it("passes /v1/embeddings and /v1/rerank through with the key, the configured model, and clear refusals", async () => {
    standIn.requests.length = 0
    const embedded = await post("/v1/embeddings", { input: ["red car", "green pear"] })
    expect(embedded.status).toBe(200)
    expect(embedded.body.data).toHaveLength(2)
    expect(standIn.requests.at(-1)?.body).toMatchObject({ model: "stand-in-embed", input: ["red car", "green pear"] })
    expect((await post("/v1/embeddings", { input: "x" }, null)).status).toBe(401)
    const other = await post("/v1/embeddings", { input: "x", model: "text-embedding-3-small" })
    expect(other.status).toBe(404)
    expect(other.body.error.code).toBe("model_not_found")
    const bad = await post("/v1/embeddings", { input: [] })
    expect(bad.status).toBe(400)
    expect(bad.body.error.message).toMatch(/input/)
    const ranked = await post("/v1/rerank", { query: "apples", documents: ["pears", "apples and pears", { text: "boats" }], top_n: 2, return_documents: true })
    expect(ranked.status).toBe(200)
    expect(ranked.body).toEqual({
      model: "stand-in-rerank",
      results: [
        { index: 0, relevance_score: 1, document: { text: "pears" } },
        { index: 1, relevance_score: 1, document: { text: "apples and pears" } }
      ]
    })
    standIn.behaviour.failNext = [{ status: 429, retryAfter: "9" }, { status: 429, retryAfter: "9" }, { status: 429, retryAfter: "9" }, { status: 429, retryAfter: "9" }]
    const limited = await fetch(`${server.url}/v1/rerank`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TEST_KEY}` },
      body: JSON.stringify({ query: "a", documents: ["b"] })
    })
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).toBe("9")
    standIn.behaviour.failNext = []
  })

  it("answers 404 naming the setting when no embedding server or reranker is configured", async () => {
    const plain = await serve({})
    try {
      const response = await fetch(`${plain.url}/v1/embeddings`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TEST_KEY}` },
        body: JSON.stringify({ input: "x" })
      })
      expect(response.status).toBe(404)
      expect(((await response.json()) as any).error.message).toMatch(/no embedding server is configured here \(search.embeddings/)
    } finally {
      await plain.close()
    }
  })

  it("refuses at load vectors made by another model or of another dimension, naming the setting", async () => {
    for (const [override, message] of [
      [{ model: "another-model" }, /search.embeddings.model: the snapshot's vectors were made by the model "stand-in-embed", but search.embeddings.model is "another-model"/],
      [{ dimensions: 768 }, /search.embeddings.dimensions: the snapshot's vectors have 48 dimensions, but search.embeddings.dimensions is 768/]
    ] as const) {
      const exit = await Effect.runPromiseExit(Layer.build(
        appLayer(settingsOf({ search: { embeddings: { ...embeddings(), ...override } } }), recordsFromPlainKeys([TEST_KEY]), {
          search: { _tag: "EngineBytes", bytes: snapshot },
          chatModel: ScriptedChat.layer(unconfiguredChat)
        }).pipe(Layer.provide(nodePlatform))
      ).pipe(Effect.scoped))
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail") : undefined
      const settingsError = error?._tag === "Fail" ? (error.error as { setting: string; message: string }) : undefined
      expect(`${settingsError?.setting}: ${settingsError?.message}`).toMatch(message)
    }
  })
})

describe("hybrid retrieval beside pages added since the snapshot", () => {
  it("finds an added page by BM25 and the snapshot's pages by vector, fused by link", async () => {
    const { index } = await embedWith(build(documents), undefined)
    const embedder = EmbeddingClient.layer({ baseUrl: standIn.baseUrl, model: "stand-in-embed", batchSize: 8, concurrency: 1, timeoutMs: 5_000, queryTimeoutMs: 2_000, retries: 0 }).pipe(
      Layer.provide(FetchHttpClient.layer)
    )
    const engine = EngineSearch.layer(index)
    const program = Effect.gen(function*() {
      const search = yield* WebSearch
      const added = yield* (yield* SearchEngine).add({ url: "https://new.example/tyres", title: "Tyres", text: "Winter tyres grip the road in snow." }, "test")
      expect(added.added).toBe(true)
      for (let i = 0; i < 100 && !(yield* (yield* SearchEngine).added).searchable; i++) yield* Effect.sleep("20 millis")
      const tyres = yield* search.search({ keywords: "winter tyres", num: 3 })
      expect(tyres.organic[0]?.link).toBe("https://new.example/tyres")
      const automobile = yield* search.search({ keywords: "automobile", num: 3 })
      expect(automobile.organic.map((r) => r.link)).toContain("https://cars.example/garage")
    })
    await Effect.runPromise(program.pipe(
      Effect.provide(Layer.effect(WebSearch, HybridSearch.make({ ...defaultHybridSearchSettings, queryPrefix: "" })).pipe(Layer.provideMerge(engine), Layer.provide(embedder))),
      Effect.scoped
    ))
  })
})

describe("the embed library with hybrid retrieval", () => {
  it("takes the embedding server as an option and finds by vector", async () => {
    const { index } = await embedWith(build(documents), undefined)
    const periscope = createPeriscope({
      search: { snapshot: encodeSnapshot(index) },
      embeddings: { baseUrl: standIn.baseUrl, model: "stand-in-embed" }
    })
    try {
      const data = await periscope.webSearch({ keywords: "automobile", num: 2 })
      expect(data.organic.map((r) => r.link).sort()).toEqual(["https://cars.example/engine", "https://cars.example/garage"])
    } finally {
      await periscope.close()
    }
  })
})
