/**
 * webFetch's addToIndex: a fetched page becomes searchable in the running engine (in a segment
 * built off the request path, beside the snapshot), per request or for every fetch by config;
 * the pages already in the index stay, with their images; a page fetched again replaces itself;
 * the answer says whether the page went in.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { FETCH_KEY, type FetchServer, postFetch, send, serveSite, type Site, startFetchServer } from "./support.ts"

const snapshot = () => {
  const builder = new IndexBuilder()
  builder.add([
    { url: "https://example.org/kept", title: "Kept page", text: "An indexed page about lighthouses and their keepers.", date: "2020-01-02", images: [{ url: "https://example.org/lamp.png", alt: "lighthouse lamp", width: 640, height: 480 }] },
    { url: "https://example.org/other", title: "Other page", text: "Something about harbours." }
  ])
  return encodeSnapshot(builder.build())
}

const search = async (server: FetchServer, keywords: string, path = "webSearch") => {
  const response = await fetch(`${server.url}/api/search/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${FETCH_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ keywords })
  })
  return (await response.json() as any).data
}

/** Polls until `found` holds (the rebuild runs in the background), for at most 10 s. */
const eventually = async (check: () => Promise<boolean>) => {
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return false
}

let site: Site
let html = "<html><head><title>Zanzibar notes</title></head><body><main><p>The word quuxolotl appears only here.</p></main></body></html>"

beforeAll(async () => {
  site = await serveSite({
    "/notes.html": (q, r) => send(html, "text/html")(q, r),
    "/config.html": send("<html><head><title>By config</title></head><body><main><p>Glorbenfest is indexed by config.</p></main></body></html>", "text/html")
  })
})

afterAll(async () => {
  await site?.close()
})

describe("webFetch addToIndex", () => {
  it("adds the page to the running engine when asked; the index keeps what it had", async () => {
    const server = await startFetchServer({ allowHosts: [site.host] }, { search: { _tag: "EngineBytes", bytes: snapshot() } })
    try {
      expect((await search(server, "quuxolotl")).organic ?? []).toEqual([])
      // Without addToIndex nothing is added.
      expect((await postFetch(server.url, { url: `${site.origin}/notes.html` })).status).toBe(200)
      await new Promise((r) => setTimeout(r, 300))
      expect((await search(server, "quuxolotl")).organic ?? []).toEqual([])
      // With it (served from the cache this time), the page becomes searchable.
      const { status, body } = await postFetch(server.url, { url: `${site.origin}/notes.html`, addToIndex: true })
      expect(status).toBe(200)
      expect(body.extra).toEqual({ index: { added: true } })
      expect(await eventually(async () => ((await search(server, "quuxolotl")).organic ?? []).length === 1)).toBe(true)
      const hit = (await search(server, "quuxolotl")).organic[0]
      expect(hit).toMatchObject({ title: "Zanzibar notes", link: `${site.origin}/notes.html` })
      // The pages and images it had are still there.
      expect((await search(server, "lighthouses")).organic[0]).toMatchObject({ link: "https://example.org/kept", date: "2020-01-02" })
      expect((await search(server, "lighthouse lamp", "imageSearch"))[0]).toMatchObject({ url: "https://example.org/lamp.png" })
      // Fetched again with new content: the page replaces itself.
      html = html.replace("quuxolotl", "flibbertigibbet")
      expect((await postFetch(server.url, { url: `${site.origin}/notes.html`, addToIndex: true, fresh: true })).status).toBe(200)
      expect(await eventually(async () => ((await search(server, "flibbertigibbet")).organic ?? []).length === 1)).toBe(true)
      expect(await eventually(async () => ((await search(server, "quuxolotl")).organic ?? []).length === 0)).toBe(true)
    } finally {
      await server.close()
    }
  })

  it("fetch.addToIndex in the config adds every fetched page", async () => {
    const server = await startFetchServer({ allowHosts: [site.host], addToIndex: true }, { search: { _tag: "EngineBytes", bytes: snapshot() } })
    try {
      // Added by the config, not asked for: the envelope is the one without the option.
      const { status, body } = await postFetch(server.url, { url: `${site.origin}/config.html` })
      expect(status).toBe(200)
      expect(body.extra).toBeNull()
      expect(await eventually(async () => ((await search(server, "glorbenfest")).organic ?? []).length === 1)).toBe(true)
    } finally {
      await server.close()
    }
  })

  it("with a backend that has no index (fixture), the fetch is answered and nothing else happens", async () => {
    const server = await startFetchServer({ allowHosts: [site.host] })
    try {
      const { status, body } = await postFetch(server.url, { url: `${site.origin}/config.html`, addToIndex: true })
      expect(status).toBe(200)
      expect(body.data.title).toBe("By config")
      expect(body.extra.index).toMatchObject({ added: false, reason: "no_index" })
    } finally {
      await server.close()
    }
  })
})
