/**
 * A loopback stand-in for an OpenSearch cluster, answering in the documented
 * REST shapes (index create/exists/delete, `_count`, `_bulk`, `_refresh`,
 * `_search` with `multi_match`, `highlight`, nested `inner_hits` and a `range`
 * filter) and checking the shapes it receives: a request it does not expect is
 * answered 400 with OpenSearch's error body and recorded in `problems`. Scoring
 * is plain term counting (title counted three times): enough to order results,
 * not BM25. Faults on demand: 429s on `_bulk` or on single items, refused
 * documents, 500 on `_search`, Basic auth.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"

interface Image {
  url: string
  alt?: string
  title?: string
  caption?: string
  heading?: string
  width?: number
  height?: number
}
interface Source {
  url: string
  title: string
  body: string
  date?: string
  lang?: string
  images?: Array<Image>
}

export interface StandInRequest {
  readonly method: string
  readonly path: string
  readonly contentType: string
  readonly authorization: string | undefined
  readonly body: string
}

export interface OpenSearchStandIn {
  readonly url: string
  readonly port: number
  readonly requests: Array<StandInRequest>
  /** Shapes the stand-in did not expect (each also answered 400). */
  readonly problems: Array<string>
  readonly indices: Map<string, { mapping: unknown; docs: Map<string, Source> }>
  /** `_bulk` requests to answer 429 before accepting one. */
  bulk429: number
  /** Document URLs whose item is answered 429 once. */
  readonly item429Once: Set<string>
  /** Answer `_search` with this status and an error body. */
  searchStatus: number | undefined
  /** Required Basic credentials ("user:pass"), or undefined for none. */
  credentials: string | undefined
  close(): Promise<void>
}

const error = (response: ServerResponse, status: number, type: string, reason: string) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify({ error: { root_cause: [{ type, reason }], type, reason }, status }))
}
const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

const words = (text: string | undefined) => (text ?? "").toLowerCase().match(/[a-z0-9]+/g) ?? []
const stem = (w: string) => w.replace(/(ing|es|s|e)$/, "")
const count = (text: string | undefined, terms: ReadonlyArray<string>) => {
  const ws = words(text).map(stem)
  return terms.reduce((n, t) => n + ws.filter((w) => w === t).length, 0)
}

const daysAgo = (math: string): number | undefined => {
  const m = /^now-(\d+)([dMy])$/.exec(math)
  if (m === null) return undefined
  const n = Number(m[1])
  return m[2] === "d" ? n : m[2] === "M" ? n * 31 : n * 366
}

export const startOpenSearchStandIn = async (): Promise<OpenSearchStandIn> => {
  const sockets = new Set<Socket>()
  const requests: Array<StandInRequest> = []
  const problems: Array<string> = []
  const indices: OpenSearchStandIn["indices"] = new Map()
  const bad = (response: ServerResponse, problem: string) => {
    problems.push(problem)
    error(response, 400, "parsing_exception", problem)
  }

  const matchesRange = (source: Source, filter: unknown): boolean => {
    const range = (filter as { range?: { date?: { gte?: string; lte?: string } } }).range?.date
    if (range === undefined) return true
    if (source.date === undefined) return false
    const date = Date.parse(source.date)
    const bound = (value: string) => {
      const days = daysAgo(value)
      return days === undefined ? Date.parse(value) : Date.now() - days * 86_400_000
    }
    if (range.gte !== undefined && date < bound(range.gte)) return false
    if (range.lte !== undefined && date > bound(range.lte) + 86_399_999) return false
    return true
  }

  const search = (index: string, body: Record<string, unknown>, response: ServerResponse) => {
    const stored = indices.get(index)
    if (stored === undefined) return error(response, 404, "index_not_found_exception", `no such index [${index}]`)
    const size = body.size
    if (typeof size !== "number" || size < 0) return bad(response, "size must be a number")
    let query = body.query as Record<string, unknown> | undefined
    let filters: ReadonlyArray<unknown> = []
    const bool = query?.bool as { must?: Record<string, unknown>; filter?: ReadonlyArray<unknown> } | undefined
    if (bool !== undefined) {
      query = bool.must
      filters = bool.filter ?? []
    }
    const docs = [...stored.docs.values()].filter((d) => filters.every((f) => matchesRange(d, f)))
    const pick = (source: Source) => {
      const fields = body._source
      if (!Array.isArray(fields)) return source
      return Object.fromEntries(Object.entries(source).filter(([k]) => fields.includes(k)))
    }
    const multi = query?.multi_match as { query?: string; fields?: ReadonlyArray<string> } | undefined
    if (multi !== undefined) {
      if (JSON.stringify(multi.fields) !== JSON.stringify(["title^3", "body"])) return bad(response, `multi_match fields ${JSON.stringify(multi.fields)}`)
      const highlight = (body.highlight as { fields?: { body?: { fragment_size?: number } } } | undefined)?.fields?.body
      if (highlight === undefined) return bad(response, "highlight.fields.body missing")
      const terms = words(multi.query).map(stem)
      const scored = docs.map((d) => ({ d, score: 3 * count(d.title, terms) + count(d.body, terms) })).filter((s) => s.score > 0)
      scored.sort((a, b) => b.score - a.score)
      const hits = scored.slice(0, size).map(({ d, score }) => {
        // The highlighter: the first sentence holding a term, terms wrapped in <em>.
        const sentence = d.body.split(/(?<=\.)\s+/).find((s) => count(s, terms) > 0) ?? d.body.slice(0, highlight.fragment_size ?? 100)
        const marked = sentence.replace(/[A-Za-z0-9]+/g, (w) => (terms.includes(stem(w.toLowerCase())) ? `<em>${w}</em>` : w))
        return { _index: index, _id: d.url, _score: score, _source: pick(d), highlight: { body: [marked] } }
      })
      return json(response, 200, { took: 1, timed_out: false, hits: { max_score: hits[0]?._score ?? null, hits } })
    }
    const nested = query?.nested as { path?: string; query?: { multi_match?: { query?: string; fields?: ReadonlyArray<string> } }; inner_hits?: { size?: number } } | undefined
    if (nested !== undefined) {
      if (nested.path !== "images" || nested.inner_hits === undefined) return bad(response, "nested query needs path images and inner_hits")
      const terms = words(nested.query?.multi_match?.query).map(stem)
      const imageScore = (im: Image) => 3 * count(im.alt, terms) + 3 * count(im.title, terms) + 2 * count(im.caption, terms) + count(im.heading, terms)
      const scored = docs.flatMap((d) => {
        const images = (d.images ?? []).map((im) => ({ im, score: imageScore(im) })).filter((x) => x.score > 0).sort((a, b) => b.score - a.score)
        return images.length === 0 ? [] : [{ d, images, score: images[0]!.score }]
      }).sort((a, b) => b.score - a.score)
      const hits = scored.slice(0, size).map(({ d, images, score }) => ({
        _index: index,
        _id: d.url,
        _score: score,
        _source: pick(d),
        inner_hits: {
          images: {
            hits: {
              hits: images.slice(0, nested.inner_hits!.size ?? 3).map(({ im, score: s }) => ({
                _index: index, _id: d.url, _nested: { field: "images", offset: d.images!.indexOf(im) }, _score: s, _source: im
              }))
            }
          }
        }
      }))
      return json(response, 200, { took: 1, timed_out: false, hits: { hits } })
    }
    return bad(response, `unexpected query ${JSON.stringify(query)}`)
  }

  const bulk = (raw: string, contentType: string, response: ServerResponse) => {
    if (!contentType.startsWith("application/x-ndjson") && !contentType.startsWith("application/json")) return bad(response, `_bulk content-type ${contentType}`)
    if (!raw.endsWith("\n")) return bad(response, "_bulk body must end with a newline")
    if (standIn.bulk429 > 0) {
      standIn.bulk429--
      return error(response, 429, "es_rejected_execution_exception", "rejected execution of coordinating operation")
    }
    const lines = raw.split("\n").slice(0, -1)
    if (lines.length % 2 !== 0) return bad(response, "_bulk needs action and source lines in pairs")
    const items: Array<unknown> = []
    let errors = false
    for (let i = 0; i < lines.length; i += 2) {
      const action = JSON.parse(lines[i]!) as { index?: { _index?: string; _id?: string } }
      const source = JSON.parse(lines[i + 1]!) as Source
      const target = action.index
      if (target?._index === undefined || target._id === undefined) return bad(response, `bad action line ${lines[i]}`)
      const stored = indices.get(target._index)
      if (stored === undefined) return bad(response, `_bulk into missing index ${target._index} (the loader must create it first)`)
      if (standIn.item429Once.delete(target._id)) {
        errors = true
        items.push({ index: { _index: target._index, _id: target._id, status: 429, error: { type: "es_rejected_execution_exception", reason: "queue full" } } })
        continue
      }
      if (source.url.includes("reject-me")) {
        errors = true
        items.push({ index: { _index: target._index, _id: target._id, status: 400, error: { type: "mapper_parsing_exception", reason: "failed to parse field [date]" } } })
        continue
      }
      const known = ["url", "title", "body", "date", "lang", "images"]
      const unknown = Object.keys(source).filter((k) => !known.includes(k))
      if (unknown.length > 0) return bad(response, `strict mapping: unknown fields ${unknown.join(",")}`)
      const created = !stored.docs.has(target._id)
      stored.docs.set(target._id, source)
      items.push({ index: { _index: target._index, _id: target._id, status: created ? 201 : 200, result: created ? "created" : "updated" } })
    }
    return json(response, 200, { took: 3, errors, items })
  }

  const handle = (request: IncomingMessage, raw: string, response: ServerResponse) => {
    const method = request.method ?? "GET"
    const path = (request.url ?? "/").split("?")[0]!
    const contentType = String(request.headers["content-type"] ?? "")
    requests.push({ method, path, contentType, authorization: request.headers.authorization, body: raw })
    if (standIn.credentials !== undefined && request.headers.authorization !== `Basic ${Buffer.from(standIn.credentials).toString("base64")}`) {
      return error(response, 401, "security_exception", "missing authentication credentials for REST request [" + path + "]")
    }
    if (method === "POST" && path === "/_bulk") return bulk(raw, contentType, response)
    const m = /^\/([^/_][^/]*)(?:\/(_search|_count|_refresh))?$/.exec(path)
    if (m === null) return bad(response, `unexpected path ${method} ${path}`)
    const index = decodeURIComponent(m[1]!)
    const action = m[2]
    const stored = indices.get(index)
    if (action === undefined) {
      if (method === "HEAD") {
        response.writeHead(stored === undefined ? 404 : 200, { "content-type": "application/json" })
        return response.end()
      }
      if (method === "DELETE") {
        if (stored === undefined) return error(response, 404, "index_not_found_exception", `no such index [${index}]`)
        indices.delete(index)
        return json(response, 200, { acknowledged: true })
      }
      if (method === "PUT") {
        if (stored !== undefined) return error(response, 400, "resource_already_exists_exception", `index [${index}] already exists`)
        const body = JSON.parse(raw) as { mappings?: { properties?: Record<string, { type?: string; analyzer?: string }> } }
        const p = body.mappings?.properties ?? {}
        const expected: Record<string, [string, string | undefined]> = {
          url: ["keyword", undefined], title: ["text", "english"], body: ["text", "english"], date: ["date", undefined], images: ["nested", undefined]
        }
        for (const [field, [type, analyzer]] of Object.entries(expected)) {
          if (p[field]?.type !== type || (analyzer !== undefined && p[field]?.analyzer !== analyzer)) return bad(response, `mapping of ${field}: ${JSON.stringify(p[field])}`)
        }
        indices.set(index, { mapping: body, docs: new Map() })
        return json(response, 200, { acknowledged: true, shards_acknowledged: true, index })
      }
      return bad(response, `unexpected ${method} ${path}`)
    }
    if (stored === undefined) return error(response, 404, "index_not_found_exception", `no such index [${index}]`)
    if (action === "_count") return json(response, 200, { count: stored.docs.size, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } })
    if (action === "_refresh") return json(response, 200, { _shards: { total: 1, successful: 1, failed: 0 } })
    if (method !== "POST" && method !== "GET") return bad(response, `_search with ${method}`)
    if (standIn.searchStatus !== undefined) return error(response, standIn.searchStatus, "search_phase_execution_exception", "all shards failed")
    if (!contentType.startsWith("application/json")) return bad(response, `_search content-type ${contentType}`)
    return search(index, JSON.parse(raw) as Record<string, unknown>, response)
  }

  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => {
      try {
        handle(request, Buffer.concat(chunks).toString("utf8"), response)
      } catch (e) {
        bad(response, `stand-in could not read the request: ${(e as Error).message}`)
      }
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const port = (server.address() as AddressInfo).port
  const standIn: OpenSearchStandIn = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    problems,
    indices,
    bulk429: 0,
    item429Once: new Set(),
    searchStatus: undefined,
    credentials: undefined,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => done())
      })
  }
  return standIn
}
