/**
 * Where grounded chat reads its pages, over real sockets: our server with the embedded engine
 * over a few pages of a loopback site, a SearXNG stand-in listing other pages of that site,
 * and the site itself. The local index's pages are read from its stored text (the site never
 * sees a request for them, even when the provider lists one of them too); only the pages the
 * provider alone listed are fetched.
 */
import { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { appLayer } from "../../core/app/Application.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { type StandIn, startStandIn } from "../support/searchProviders.ts"
import { authHeaders, type RunningServer, serveInProcess, TEST_KEY } from "../support/servers.ts"
import { htmlPage, type Site, startSite } from "./groundingHarness.ts"

let site: Site
let searx: StandIn
let server: RunningServer

beforeAll(async () => {
  site = await startSite({
    "/stored-a": htmlPage("Stored A", "<p>Live copy of page A about compaction.</p>"),
    "/stored-b": htmlPage("Stored B", "<p>Live copy of page B about compaction.</p>"),
    "/live-c": htmlPage("Live C", "<p>Compaction merges segments in the background. It runs while the index answers.</p>"),
    "/live-d": htmlPage("Live D", "<p>Compaction frees the space of deleted records. Nothing else changes.</p>")
  })
  const builder = new IndexBuilder()
  builder.add([
    { url: `${site.url}/stored-a`, title: "Stored A", text: "Stored copy of page A. Compaction rewrites the log into sorted files." },
    { url: `${site.url}/stored-b`, title: "Stored B", text: "Stored copy of page B. Compaction keeps the newest version of each key." }
  ])
  searx = await startStandIn("searxng", [
    { title: "Live C", url: `${site.url}/live-c`, snippet: "Compaction merges segments." },
    // Listed by the provider as well (with a tracking parameter): the index still holds it.
    { title: "Stored A", url: `${site.url}/stored-a?utm_source=searx`, snippet: "Compaction rewrites the log." },
    { title: "Live D", url: `${site.url}/live-d`, snippet: "Compaction frees space." }
  ])
  const settings = settingsOf({
    search: { providers: [{ name: "searx", kind: "searxng", baseUrl: searx.url }], cache: { maxEntries: 0 } },
    fetch: { allowPrivateAddresses: true, cacheTtlSeconds: 0 }
  })
  const services = appLayer(settings, recordsFromPlainKeys([TEST_KEY]), { search: { _tag: "Layer", layer: EngineSearch.layer(builder.build()) } }).pipe(
    Layer.provide(nodePlatform),
    Layer.orDie
  )
  server = await serveInProcess(services)
})

afterAll(async () => {
  await server?.close()
  await searx?.close()
  await site?.close()
})

describe("grounded chat with the local index and a live provider", () => {
  it("reads the index's pages from its stored text and fetches only the pages the provider alone listed", async () => {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({
        model: "periscope-grounded",
        messages: [{ role: "user", content: "what does compaction do" }],
        web_search_options: { search_context_size: "high" }
      })
    })
    expect(response.status).toBe(200)
    const body = await response.json() as any
    const urls = body.search_results.map((r: { url: string }) => new URL(r.url).pathname).sort()
    expect(urls).toEqual(["/live-c", "/live-d", "/stored-a", "/stored-b"])
    expect(body.periscope_grounding).toMatchObject({ retrieval: "ok", sources: 4, pages_read: 4 })
    expect([...site.requested].sort()).toEqual(["/live-c", "/live-d"])
    // The answer quotes the stored text of the index's pages and the fetched text of the others.
    const content: string = body.choices[0].message.content
    expect(content).toContain("Compaction rewrites the log into sorted files.")
    expect(content).toContain("Compaction keeps the newest version of each key.")
    expect(content).toContain("Compaction merges segments in the background.")
    expect(content).not.toContain("Live copy")
  })
})
