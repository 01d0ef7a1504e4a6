/**
 * The OpenSearch backend and loader against a loopback stand-in answering in
 * the documented REST shapes (test/search/opensearchStandIn.ts, which also
 * checks what it receives): `periscope index --to` creates the index with the
 * mapping and loads `_bulk` NDJSON (429s retried, item errors reported), then
 * Periscope's HTTP API answers webSearch and imageSearch from it through the
 * configured backend (config file shape, credentials from the environment),
 * with plain-text snippets, dates, image sizes, freshness as a range filter,
 * and failures mapped to the search error envelope without secrets.
 */
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { ConfigProvider, Effect, Layer, Redacted, Result } from "effect"
import { FetchHttpClient } from "effect/http"
import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { formatOpenSearchSummary, indexOpenSearch } from "../../adapters/node/indexCommand.ts"
import { openSources } from "../../adapters/node/sources/openSources.ts"
import { searchLayer } from "../../core/app/SearchBackend.ts"
import { bulkLoad } from "../../core/backends/search/OpenSearchBulk.ts"
import { parseOpenSearchTarget } from "../../core/backends/search/OpenSearchConnection.ts"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import type { OpenSearchConfig } from "../../core/config/OpenSearchConfig.ts"
import { decoderFor } from "../../core/schema/Decode.ts"
import { authHeaders, freePort, type RunningServer, startInProcess } from "../support/servers.ts"
import { type OpenSearchStandIn, startOpenSearchStandIn } from "./opensearchStandIn.ts"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "periscope-opensearch-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const recent = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10)
const site = join(work, "site")
mkdirSync(site, { recursive: true })
const article = (title: string, body: string, head = "") =>
  `<!doctype html><html lang="en"><head><title>${title}</title>${head}</head><body><main><h1>${title}</h1>${body}</main></body></html>`
writeFileSync(join(site, "lighthouses.html"), article("Lighthouses of Brittany",
  `<p>The lighthouses of Brittany guide ships along a rocky coast. Keepers lived in the towers for weeks.</p>` +
    `<figure><img src="img/phare.jpg" alt="A lighthouse on a rock at dusk" width="1200" height="800"><figcaption>Phare du Four</figcaption></figure>`,
  `<meta property="article:published_time" content="${recent}">`))
writeFileSync(join(site, "harbours.html"), article("Harbours",
  `<p>Fishing harbours shelter boats from storms; a lighthouse marks the entrance of many of them.</p>` +
    `<img src="img/harbour.png" alt="Boats in a harbour">`, `<meta property="article:published_time" content="2015-06-01">`))
writeFileSync(join(site, "tides.html"), article("Tides", `<p>Tides rise and fall twice a day on the Atlantic coast.</p>`))
writeFileSync(join(site, "genindex.html"), article("Index", `<p>Lighthouses, harbours, tides.</p>`))

const INDEX = "periscope-docs"
let standIn: OpenSearchStandIn
beforeAll(async () => {
  standIn = await startOpenSearchStandIn()
})
afterAll(() => standIn.close())
afterEach(() => {
  standIn.credentials = undefined
  standIn.searchStatus = undefined
  standIn.bulk429 = 0
})

const load = (options: { fresh?: boolean; allowShrink?: boolean; index?: string; args?: Array<string>; username?: string; password?: string } = {}) =>
  Effect.runPromise(indexOpenSearch({
    sources: openSources(options.args ?? [`${site}=https://coast.example.org/`]),
    connection: {
      url: standIn.url,
      index: options.index ?? INDEX,
      username: options.username === undefined ? undefined : Redacted.make(options.username),
      password: options.password === undefined ? undefined : Redacted.make(options.password)
    },
    fresh: options.fresh,
    allowShrink: options.allowShrink,
    bulk: { retryBaseMs: 5 }
  }).pipe(Effect.provide(FetchHttpClient.layer)))

/** A Periscope server whose search backend is chosen as the config file chooses it. */
const serverOver = async (config: OpenSearchConfig, env: Record<string, string> = {}): Promise<RunningServer> => {
  const layer = searchLayer({ _tag: "OpenSearch", config }).pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))),
    Layer.orDie
  )
  return startInProcess({ search: layer as never })
}

const post = async (server: RunningServer, endpoint: "webSearch" | "imageSearch", body: unknown) => {
  const response = await fetch(`${server.url}/api/search/${endpoint}`, { method: "POST", headers: authHeaders(), body: JSON.stringify(body) })
  return { status: response.status, body: await response.json() as Record<string, any> }
}

describe("periscope index --to opensearch://", () => {
  it("parses targets and refuses bad ones with the rule", () => {
    expect(parseOpenSearchTarget("opensearch://localhost:9200/periscope")).toEqual({ url: "http://localhost:9200", index: "periscope" })
    expect(parseOpenSearchTarget("opensearch+https://search.example.org/prefix/docs")).toEqual({ url: "https://search.example.org/prefix", index: "docs" })
    expect(parseOpenSearchTarget("https://search.example.org:9243/docs-2024")).toEqual({ url: "https://search.example.org:9243", index: "docs-2024" })
    expect(parseOpenSearchTarget("opensearch://localhost:9200")).toMatch(/must name the index/)
    expect(parseOpenSearchTarget("opensearch://localhost:9200/Docs")).toMatch(/not a valid index name/)
    expect(parseOpenSearchTarget("opensearch://user:secret@localhost:9200/docs")).toMatch(/must not carry credentials/)
    expect(parseOpenSearchTarget("redis://localhost/docs")).toMatch(/^must be opensearch:\/\//)
  })

  it("creates the index with the mapping and loads the documents with _bulk NDJSON, then refreshes", async () => {
    const summary = await load({ username: "loader", password: "s3cret-pass" })
    expect(standIn.problems).toEqual([])
    expect(summary.notWritten).toBeUndefined()
    expect(summary.bulk).toMatchObject({ indexed: 3, failed: 0, retries: 0 })
    expect(summary.skipped).toEqual([{ reason: "generated index page (Sphinx general index)", count: 1 }])
    const calls = standIn.requests.map((r) => `${r.method} ${r.path}`)
    expect(calls).toEqual([`GET /${INDEX}/_count`, `HEAD /${INDEX}`, `PUT /${INDEX}`, "POST /_bulk", `POST /${INDEX}/_refresh`])
    const bulk = standIn.requests.find((r) => r.path === "/_bulk")!
    expect(bulk.contentType).toMatch(/^application\/x-ndjson/)
    expect(bulk.authorization).toBe(`Basic ${Buffer.from("loader:s3cret-pass").toString("base64")}`)
    const lines = bulk.body.trimEnd().split("\n").map((l) => JSON.parse(l))
    expect(lines[0]).toEqual({ index: { _index: INDEX, _id: "https://coast.example.org/harbours.html" } })
    expect(lines[1]).toMatchObject({ url: "https://coast.example.org/harbours.html", title: "Harbours", date: "2015-06-01", images: [{ url: "https://coast.example.org/img/harbour.png", alt: "Boats in a harbour" }] })
    expect(standIn.indices.get(INDEX)!.docs.get("https://coast.example.org/lighthouses.html")!.images).toEqual([
      { url: "https://coast.example.org/img/phare.jpg", alt: "A lighthouse on a rock at dusk", caption: "Phare du Four", heading: "Lighthouses of Brittany", width: 1200, height: 800 }
    ])
    expect(formatOpenSearchSummary(summary)).toContain(`Loaded into ${standIn.url}/${INDEX}: 3 documents`)

    // Loaded again: same ids, replaced in place; the index is not created twice.
    standIn.requests.length = 0
    expect((await load()).bulk).toMatchObject({ indexed: 3 })
    expect(standIn.requests.some((r) => r.method === "PUT")).toBe(false)
    expect(standIn.indices.get(INDEX)!.docs.size).toBe(3)
  })

  it("retries 429s (whole requests and single items) with backoff, and reports refused documents by URL", async () => {
    const index = "retries"
    standIn.bulk429 = 2
    standIn.item429Once.add("https://kb.example.org/b")
    const connection = { url: standIn.url, index }
    const docs = ["a", "b", "c", "reject-me"].map((n) => ({ url: `https://kb.example.org/${n}`, title: n, text: `Document ${n}.` }))
    const report = await Effect.runPromise(bulkLoad(connection, docs, { batchDocuments: 2, retryBaseMs: 5 }).pipe(Effect.provide(FetchHttpClient.layer)))
    expect(report).toMatchObject({ indexed: 3, failed: 1, retries: 3 })
    expect(report.errors).toEqual([{ url: "https://kb.example.org/reject-me", message: "400 mapper_parsing_exception: failed to parse field [date]" }])
    expect([...standIn.indices.get(index)!.docs.keys()].sort()).toEqual(["https://kb.example.org/a", "https://kb.example.org/b", "https://kb.example.org/c"])
    expect(standIn.problems).toEqual([])
  })

  it("gives up on a cluster that keeps answering 429 and says so per document", async () => {
    standIn.bulk429 = 100
    const report = await Effect.runPromise(bulkLoad({ url: standIn.url, index: "busy" }, [{ url: "https://kb.example.org/x", title: "x", text: "x" }], { maxRetries: 2, retryBaseMs: 1 })
      .pipe(Effect.provide(FetchHttpClient.layer)))
    expect(report).toMatchObject({ indexed: 0, failed: 1, retries: 2 })
    expect(report.errors[0]!.message).toBe("still rejected with 429 after 2 retries")
  })

  it("never shrinks the index unless asked: nothing read, or a smaller --fresh load, sends nothing", async () => {
    const empty = join(work, "empty")
    mkdirSync(empty, { recursive: true })
    standIn.requests.length = 0
    const nothing = await load({ args: [`${empty}=https://coast.example.org/`], fresh: true })
    expect(nothing.notWritten).toMatch(/^nothing was indexed from the sources/)
    expect(standIn.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /${INDEX}/_count`])

    const small = join(work, "small")
    mkdirSync(small, { recursive: true })
    writeFileSync(join(small, "one.html"), article("One page", "<p>Only one page about lighthouses.</p>"))
    const smaller = await load({ args: [`${small}=https://coast.example.org/`], fresh: true })
    expect(smaller.notWritten).toMatch(/^--fresh would replace the OpenSearch index periscope-docs \(3 documents\) with 1 document/)
    expect(standIn.indices.get(INDEX)!.docs.size).toBe(3)
    // The same on a throw-away index with --allow-shrink: deleted, created, loaded.
    await load({ index: "shrinkable" })
    const forced = await load({ index: "shrinkable", args: [`${small}=https://coast.example.org/`], fresh: true, allowShrink: true })
    expect(forced.bulk).toMatchObject({ indexed: 1 })
    expect(standIn.indices.get("shrinkable")!.docs.size).toBe(1)
  })

  it("the CLI: --to loads the index, a bad target is named, a cluster that is down is one line and exit 1", async () => {
    const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(process.execPath, ["adapters/node/cli.ts", "index", "--quiet", ...args], {
          cwd: root, env: { ...process.env, PERISCOPE_DATA_DIR: join(work, "cli-data"), ...env }, timeout: 60_000
        }, (error, stdout, stderr) => done({ code: error === null ? 0 : (error as { code?: number }).code ?? 1, stdout, stderr }))
      })
    standIn.credentials = "cli:pw-123456"
    const loaded = await cli([`${site}=https://cli.example.org/`, "--to", `opensearch://127.0.0.1:${standIn.port}/from-cli`], {
      OPENSEARCH_USERNAME: "cli", OPENSEARCH_PASSWORD: "pw-123456"
    })
    expect(loaded.code, loaded.stderr).toBe(0)
    expect(loaded.stdout).toContain(`Loaded into http://127.0.0.1:${standIn.port}/from-cli: 3 documents`)
    expect(standIn.indices.get("from-cli")!.docs.size).toBe(3)

    const bad = await cli([`${site}=https://cli.example.org/`, "--to", "opensearch://127.0.0.1:9200/Bad Name"])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain("periscope: --to: names the index")

    const down = await cli([`${site}=https://cli.example.org/`, "--to", `opensearch://127.0.0.1:${await freePort()}/docs`], { OPENSEARCH_PASSWORD: "pw-123456" })
    expect(down.code).toBe(1)
    expect(down.stderr).toMatch(/could not reach OpenSearch at http:\/\/127\.0\.0\.1:\d+: connection failed/)
    expect(down.stderr + down.stdout).not.toContain("pw-123456")
  })
})

describe("search.backend: opensearch", () => {
  const config: OpenSearchConfig = { url: "", index: INDEX }
  let server: RunningServer
  beforeAll(async () => {
    await load()
    server = await serverOver({ ...config, url: standIn.url })
  })
  afterAll(() => server.close())

  it("answers the seed's webSearch with BM25 hits, plain-text snippets and dates", async () => {
    const { status, body } = await post(server, "webSearch", { keywords: "lighthouses" })
    expect(status).toBe(200)
    expect(body).toMatchObject({ success: true, code: "200", extra: null })
    expect(body.data.query).toBe("lighthouses")
    expect(body.data.organic[0]).toEqual({
      title: "Lighthouses of Brittany",
      link: "https://coast.example.org/lighthouses.html",
      // The stand-in's highlighter gives the first sentence with a term (here after the page's heading); the <em> markup is gone.
      snippet: "Lighthouses of Brittany The lighthouses of Brittany guide ships along a rocky coast.",
      position: 1,
      date: recent
    })
    expect(body.data.organic.map((r: { link: string }) => r.link)).toEqual(["https://coast.example.org/lighthouses.html", "https://coast.example.org/harbours.html"])
    for (const r of body.data.organic) expect(r.snippet).not.toMatch(/<\/?em>/)
    const sent = JSON.parse(standIn.requests.filter((r) => r.path === `/${INDEX}/_search`).at(-1)!.body)
    expect(sent.query).toEqual({ multi_match: { query: "lighthouses", fields: ["title^3", "body"], type: "best_fields" } })
    expect(sent.size).toBe(10)
  })

  it("answers imageSearch with the matching images of the same documents, with sizes when known", async () => {
    const { status, body } = await post(server, "imageSearch", { keywords: "lighthouse", num: 5 })
    expect(status).toBe(200)
    expect(body.data).toEqual([
      { url: "https://coast.example.org/img/phare.jpg", refUrl: "https://coast.example.org/lighthouses.html", title: "A lighthouse on a rock at dusk", width: 1200, height: 800 }
    ])
    const harbour = await post(server, "imageSearch", { keywords: "boats harbour" })
    expect(harbour.body.data).toEqual([{ url: "https://coast.example.org/img/harbour.png", refUrl: "https://coast.example.org/harbours.html", title: "Boats in a harbour" }])
  })

  it("applies freshness as a range filter on date", async () => {
    const { status, body } = await post(server, "webSearch", { keywords: "lighthouses", freshness: "week" })
    expect(status).toBe(200)
    expect(body.data.organic.map((r: { link: string }) => r.link)).toEqual(["https://coast.example.org/lighthouses.html"])
    const sent = JSON.parse(standIn.requests.filter((r) => r.path === `/${INDEX}/_search`).at(-1)!.body)
    expect(sent.query.bool.filter).toEqual([{ range: { date: { gte: "now-7d" } } }])
    const range = await post(server, "webSearch", { keywords: "lighthouse", freshness: { from: "2015-01-01", to: "2015-12-31" } })
    expect(range.body.data.organic.map((r: { link: string }) => r.link)).toEqual(["https://coast.example.org/harbours.html"])
  })

  it("maps cluster failures to the search error envelope, never showing credentials", async () => {
    standIn.searchStatus = 500
    const failing = await post(server, "webSearch", { keywords: "lighthouses" })
    expect(failing.status).toBe(502)
    expect(failing.body).toMatchObject({ success: false, code: "500", data: null, exception: { detail: "the search cluster refused the query (500)" } })
    standIn.searchStatus = undefined

    const missing = await serverOver({ url: standIn.url, index: "no-such-index" })
    try {
      const answer = await post(missing, "webSearch", { keywords: "x" })
      expect(answer.status).toBe(503)
      expect(answer.body.exception.detail).toContain(`the search index "no-such-index" does not exist yet`)
    } finally {
      await missing.close()
    }

    standIn.credentials = "reader:right-password"
    const wrong = await serverOver({ url: standIn.url, index: INDEX, usernameEnv: "OS_USER", passwordEnv: "OS_PASS" }, { OS_USER: "reader", OS_PASS: "wrong-password" })
    const right = await serverOver({ url: standIn.url, index: INDEX, usernameEnv: "OS_USER", passwordEnv: "OS_PASS" }, { OS_USER: "reader", OS_PASS: "right-password" })
    try {
      const refused = await post(wrong, "webSearch", { keywords: "lighthouses" })
      expect(refused.status).toBe(502)
      expect(JSON.stringify(refused.body)).not.toContain("wrong-password")
      const accepted = await post(right, "webSearch", { keywords: "lighthouses" })
      expect(accepted.status).toBe(200)
      expect(accepted.body.data.organic).toHaveLength(2)
    } finally {
      await wrong.close()
      await right.close()
    }

    const down = await serverOver({ url: `http://127.0.0.1:${await freePort()}`, index: INDEX })
    try {
      const answer = await post(down, "webSearch", { keywords: "x" })
      expect(answer.status).toBe(503)
      expect(answer.body.exception.detail).toBe("the search cluster cannot be reached")
    } finally {
      await down.close()
    }
  })

  it("the config file: the section is checked field by field, and an unset credential variable stops the start", async () => {
    const decode = decoderFor(ConfigFile, "file", { unknownKeys: "error" })
    const ok = decode({ search: { backend: "opensearch", opensearch: { url: "http://localhost:9200", index: "periscope", usernameEnv: "OS_USER", passwordEnv: "OS_PASS" } } })
    expect(Result.isSuccess(ok)).toBe(true)
    const failure = (input: unknown) => {
      const result = decode(input)
      return Result.isFailure(result) ? result.failure.message : "decoded"
    }
    expect(failure({ search: { backend: "opensearch" } })).toContain("search.opensearch: is required when backend is \"opensearch\"")
    expect(failure({ search: { backend: "opensearch", opensearch: { url: "localhost:9200", index: "periscope" } } })).toContain("search.opensearch.url: must be an http(s) URL")
    expect(failure({ search: { backend: "opensearch", opensearch: { url: "http://localhost:9200", index: "Periscope" } } })).toContain("search.opensearch.index: must be an index name")
    expect(failure({ search: { backend: "elastic" } })).toContain("search.backend: must be \"engine\", \"fixture\" or \"opensearch\"")

    const unset = searchLayer({ _tag: "OpenSearch", config: { url: standIn.url, index: INDEX, passwordEnv: "NOT_SET_ANYWHERE" } }).pipe(
      Layer.provide(FetchHttpClient.layer),
      Layer.provide(NodeFileSystem.layer),
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({})))
    )
    const built = await Effect.runPromise(Effect.result(Layer.build(unset).pipe(Effect.scoped)))
    expect(Result.isFailure(built) && built.failure).toMatchObject({ setting: "search.opensearch.passwordEnv", message: "names NOT_SET_ANYWHERE, which is not set" })
  })
})
