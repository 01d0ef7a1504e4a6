/**
 * A loopback stand-in for an embedding server and a reranker, speaking their documented shapes:
 * POST /v1/embeddings (OpenAI's: {model, input, dimensions?} -> {object: "list", data: [{object:
 * "embedding", index, embedding}], model, usage}), POST /rerank in Cohere's and Jina's shape
 * ({model, query, documents, top_n} -> {results: [{index, relevance_score}]}) and POST /tei/rerank
 * in Text Embeddings Inference's ({query, texts} -> [{index, score}]).
 *
 * Its vectors are deterministic: each word (or the concept a test maps it to, so that "car"
 * and "automobile" can be one) adds ±1 at a hashed position, the sum normalised. Texts that
 * share words or concepts are near; that is all a test of the plumbing needs. Its reranker
 * scores a document by how many of the query's words (concepts) it holds.
 *
 * Behaviours a test sets: a delay, failures for the next requests (status, Retry-After, body),
 * dropping connections, answers of another dimension or of the wrong shape, a required key.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface Failure {
  readonly status: number
  readonly retryAfter?: string
  readonly body?: string
}

export interface StandInBehaviour {
  dimensions: number
  delayMs: number
  /** Answered to the next requests, one each, before any is served. */
  failNext: Array<Failure>
  /** Answered to the next rerank requests only. */
  failNextRerank: Array<Failure>
  /** Every connection dropped without an answer. */
  down: boolean
  /** Vectors of this many dimensions instead (a model swapped behind the name). */
  answerDimensions: number | undefined
  /** An answer without its data array. */
  malformed: boolean
  /** The bearer key required, when set. */
  requiredKey: string | undefined
  /** Words mapped to a shared concept. */
  concepts: Record<string, string>
}

export interface RecordedRequest {
  readonly path: string
  readonly body: Record<string, unknown>
  readonly authorization: string | undefined
}

export interface ModelServerStandIn {
  readonly url: string
  /** `<url>/v1`: the embeddings base URL. */
  readonly baseUrl: string
  readonly behaviour: StandInBehaviour
  readonly requests: Array<RecordedRequest>
  /** The most requests it was answering at once. */
  readonly maxInFlight: () => number
  /** Inputs the embeddings route was sent, over all requests. */
  readonly embeddedTexts: () => Array<string>
  readonly close: () => Promise<void>
}

const words = (text: string): Array<string> => text.toLowerCase().match(/[a-z0-9]+/g) ?? []

/** FNV-1a of a string. */
const fnv = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** The concept a word stands for (itself unless a test mapped it; never an Object property such as "constructor"). */
const conceptOf = (concepts: Record<string, string>, word: string): string => (Object.hasOwn(concepts, word) ? concepts[word]! : word)

/** The stand-in's vector of a text. */
export const standInVector = (text: string, dimensions: number, concepts: Record<string, string> = {}): Array<number> => {
  const out: Array<number> = new Array<number>(dimensions).fill(0)
  for (const word of words(text)) {
    const token = conceptOf(concepts, word)
    const h = fnv(token)
    out[h % dimensions]! += h & 0x80000000 ? -1 : 1
  }
  // A text without words still gets a direction, not a zero vector.
  if (!out.some((x) => x !== 0)) out[fnv(text) % dimensions] = 1
  const norm = Math.sqrt(out.reduce((s, x) => s + x * x, 0))
  return out.map((x) => x / norm)
}

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const json = (response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(JSON.stringify(value))
}

export const startModelServerStandIn = async (options: Partial<StandInBehaviour> = {}): Promise<ModelServerStandIn> => {
  const behaviour: StandInBehaviour = {
    dimensions: 64,
    delayMs: 0,
    failNext: [],
    failNextRerank: [],
    down: false,
    answerDimensions: undefined,
    malformed: false,
    requiredKey: undefined,
    concepts: {},
    ...options
  }
  const requests: Array<RecordedRequest> = []
  let inFlight = 0
  let maxInFlight = 0
  const server: Server = createServer(async (request, response) => {
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    response.on("close", () => inFlight--)
    const text = await readBody(request)
    if (behaviour.down) {
      request.socket.destroy()
      return
    }
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(text) as Record<string, unknown>
    } catch {
      json(response, 400, { error: { message: "body is not JSON" } })
      return
    }
    const path = (request.url ?? "/").split("?")[0]!
    requests.push({ path, body, authorization: request.headers.authorization })
    if (behaviour.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs))
    if (response.destroyed) return
    if (behaviour.requiredKey !== undefined && request.headers.authorization !== `Bearer ${behaviour.requiredKey}`) {
      json(response, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } })
      return
    }
    const failure = behaviour.failNext.shift() ?? (path.endsWith("/rerank") ? behaviour.failNextRerank.shift() : undefined)
    if (failure !== undefined) {
      response.writeHead(failure.status, { "content-type": "application/json", ...(failure.retryAfter === undefined ? {} : { "retry-after": failure.retryAfter }) })
      response.end(failure.body ?? JSON.stringify({ error: { message: `stand-in failure ${failure.status}` } }))
      return
    }
    const concepts = behaviour.concepts
    if (path === "/v1/embeddings") {
      const input = body.input
      const texts = typeof input === "string" ? [input] : Array.isArray(input) ? input.map(String) : undefined
      if (texts === undefined || typeof body.model !== "string") {
        json(response, 400, { error: { message: "input and model are required" } })
        return
      }
      if (behaviour.malformed) {
        json(response, 200, { object: "list", embeddings: [] })
        return
      }
      const dimensions = behaviour.answerDimensions ?? (typeof body.dimensions === "number" ? body.dimensions : behaviour.dimensions)
      // Out of order on purpose: clients must place vectors by `index`.
      const data = texts.map((t, index) => ({ object: "embedding", index, embedding: standInVector(t, dimensions, concepts) })).reverse()
      const tokens = texts.reduce((n, t) => n + words(t).length, 0)
      json(response, 200, { object: "list", data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } })
      return
    }
    if (path === "/rerank" || path === "/tei/rerank") {
      const query = String(body.query ?? "")
      const documents = (path === "/rerank" ? body.documents : body.texts) as Array<unknown> | undefined
      if (!Array.isArray(documents) || query === "") {
        json(response, 422, { error: path === "/rerank" ? "query and documents are required" : "query and texts are required" })
        return
      }
      const wanted = new Set(words(query).map((w) => conceptOf(concepts, w)))
      const scored = documents.map((d, index) => {
        const text = typeof d === "string" ? d : String((d as { text?: unknown }).text ?? "")
        const held = new Set(words(text).map((w) => conceptOf(concepts, w)))
        let hits = 0
        for (const w of wanted) if (held.has(w)) hits++
        return { index, score: hits / Math.max(1, wanted.size) }
      }).sort((a, b) => b.score - a.score || a.index - b.index)
      if (path === "/tei/rerank") json(response, 200, scored)
      else {
        const top = typeof body.top_n === "number" ? scored.slice(0, body.top_n) : scored
        json(response, 200, { id: "standin", results: top.map((s) => ({ index: s.index, relevance_score: s.score })), meta: {} })
      }
      return
    }
    json(response, 404, { error: { message: `no route ${path}` } })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    baseUrl: `${url}/v1`,
    behaviour,
    requests,
    maxInFlight: () => maxInFlight,
    embeddedTexts: () => requests.filter((r) => r.path === "/v1/embeddings").flatMap((r) => (Array.isArray(r.body.input) ? r.body.input.map(String) : [String(r.body.input)])),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
