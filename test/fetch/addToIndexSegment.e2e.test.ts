/**
 * addToIndex on a large index never stops the answers: on a snapshot file of 50,000 generated
 * pages, pages added through webFetch are searchable soon after while searches sent meanwhile
 * all succeed (and some are answered while the segment is being built); the answer says whether
 * each page went in, or why not, per key a minute and within the added pages' bounds; a page
 * added twice is one page. A reload keeps the added pages, a `periscope index` run takes them
 * into the snapshot (the server lets go of them at its next reload), a restart finds the ones
 * added since in the journal; the heap comes back near where it was.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer, Queue, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nodeJobWorkersLayer } from "../../adapters/node/jobThreads.ts"
import { systemResolver } from "../../adapters/node/sources/crawl/AddressGuard.ts"
import { NodePageFetcher } from "../../adapters/node/sources/crawl/NodePageFetcher.ts"
import * as UndiciHttpClient from "../../adapters/node/undiciHttpClient.ts"
import { appLayer } from "../../core/app/Application.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { addedPagesPath } from "../../core/backends/AddedPagesJournal.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import type { FetchConfig } from "../../core/config/FetchConfig.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { type InProcessServer, root, serveInProcess } from "../support/servers.ts"
import { send, serveSite, type Site } from "./support.ts"

const KEYS = ["segment-key-a-0123456789", "segment-key-b-0123456789", "segment-key-c-0123456789"] as const
const [KEY_A, KEY_B, KEY_C] = KEYS
const PAGES = 50_000
const execFileAsync = promisify(execFile)

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const heapAfterGc = () => {
  for (let i = 0; i < 3; i++) gc()
  return process.memoryUsage().heapUsed
}

// Generated pages: a few hundred words, so that every query has many candidates.
const words = Array.from({ length: 400 }, (_, i) => `word${i.toString(36)}`)
const snapshotBytes = (extra: ReadonlyArray<{ url: string; title: string; text: string }> = []) => {
  const builder = new IndexBuilder()
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
  const docs = []
  for (let i = 0; i < PAGES; i++) {
    const text = Array.from({ length: 12 + Math.floor(next() * 20) }, () => words[Math.floor(next() ** 2 * words.length)]).join(" ")
    docs.push({ url: `https://docs.example/${i}`, title: `${words[i % words.length]} page ${i}`, text })
  }
  builder.add([...docs, ...extra])
  return encodeSnapshot(builder.build())
}

const html = (title: string, body: string) => `<html><head><title>${title}</title></head><body><main><p>${body}</p></main></body></html>`

let dir: string
let snapshot: string
/** The snapshot with one more page, for a reload (built before any server runs in this process: building blocks it). */
let withMarker: Uint8Array
let site: Site
const bodies: Record<string, string> = {}
const routes: Record<string, (q: any, r: any) => void> = {}
for (let n = 0; n < 40; n++) {
  bodies[`/p${n}`] = html(`Added page ${n}`, `The word zqadded${n} is on this page only. ${Array.from({ length: 3000 }, (_, i) => words[(i * 7 + n) % words.length]).join(" ")}`)
  routes[`/p${n}`] = (q, r) => send(bodies[`/p${n}`]!, "text/html")(q, r)
}
routes["/empty"] = send("<html><head><title></title></head><body></body></html>", "text/html")
routes["/huge"] = send(html("Huge", `zqhuge ${"lorem ipsum dolor ".repeat(5000)}`), "text/html")

interface Server extends InProcessServer {
  readonly reload: () => Promise<void>
}

/** Periscope over the snapshot file, with job threads as the server has them, reloads on demand, and these fetch settings. */
const startServer = async (fetchSettings: FetchConfig): Promise<Server> => {
  const reloads = Effect.runSync(Queue.unbounded<void>())
  const platform = Layer.mergeAll(NodeFileSystem.layer, UndiciHttpClient.layer, NodePageFetcher.layer({ allow: false, resolve: systemResolver }), nodeJobWorkersLayer)
  const services = appLayer(settingsOf({ fetch: { allowHosts: [site.host], ...fetchSettings } }), recordsFromPlainKeys([...KEYS], 1_000_000), {
    search: { _tag: "Engine", snapshot },
    hooks: { reloads: { name: "test", requests: Stream.fromQueue(reloads) } },
    chatModel: ScriptedChat.layer(unconfiguredChat)
  }).pipe(Layer.provide(platform), Layer.orDie)
  const server = await serveInProcess(services)
  const reloaded = async () => Number(/periscope_index_reloads_total\{[^}]*outcome="ok"[^}]*\} (\d+)/.exec(await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${KEY_A}` } })).text())?.[1] ?? 0)
  return {
    ...server,
    reload: async () => {
      const before = await reloaded()
      Effect.runSync(Queue.offer(reloads, undefined))
      expect(await eventually(async () => (await reloaded()) > before)).toBe(true)
    }
  }
}

const post = async (server: { url: string }, path: string, body: unknown, key: string = KEY_A) => {
  const response = await fetch(`${server.url}/api/search/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() as any }
}
const links = async (server: { url: string }, keywords: string) => ((await post(server, "webSearch", { keywords })).body.data?.organic ?? []).map((h: any) => h.link)
const add = (server: { url: string }, path: string, key: string = KEY_A) => post(server, "webFetch", { url: `${site.origin}${path}`, addToIndex: true, fresh: true }, key)

/** Polls until `check` holds, for at most 60 s (a segment build on a busy machine). */
const eventually = async (check: () => Promise<boolean>) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 25))
  }
  return false
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "periscope-segment-"))
  snapshot = join(dir, "index.snapshot")
  writeFileSync(snapshot, snapshotBytes())
  withMarker = snapshotBytes([{ url: "https://docs.example/marker", title: "Marker", text: "zqmarker" }])
  site = await serveSite(routes)
}, 300_000)

afterAll(async () => {
  await site?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe("addToIndex on a large index", () => {
  it("answers every search while pages are added; the pages are found right after; reload, index run and restart keep them; the heap comes back", async () => {
    let server = await startServer({ addToIndexPerMinute: 1000 })
    try {
      // Warm: the query path compiled, the caches filled, before the heap is measured.
      for (let i = 0; i < 50; i++) expect((await post(server, "webSearch", { keywords: `${words[i]} ${words[i + 1]}` })).status).toBe(200)
      const heapBefore = heapAfterGc()

      // Searches from four clients, all the time pages are being added and built.
      let adding = true
      let answered = 0
      let answeredWhileBuilding = 0
      let building = false
      const failures: Array<string> = []
      const searching = Array.from({ length: 4 }, async (_, c) => {
        for (let i = 0; adding; i++) {
          const { status, body } = await post(server, "webSearch", { keywords: `${words[(i * 3 + c) % words.length]} ${words[(i * 5 + c) % words.length]}` })
          if (status !== 200 || body.success !== true || body.data.organic.length === 0) failures.push(`${status} ${JSON.stringify(body).slice(0, 200)}`)
          answered++
          if (building) answeredWhileBuilding++
        }
      })
      const added = await Promise.all(Array.from({ length: 30 }, (_, n) => add(server, `/p${n}`)))
      building = true
      for (const { status, body } of added) {
        expect(status).toBe(200)
        expect(body.extra).toEqual({ index: { added: true } })
      }
      expect(await eventually(async () => (await links(server, "zqadded29")).length === 1 && (await links(server, "zqadded0")).length === 1)).toBe(true)
      building = false
      adding = false
      await Promise.all(searching)
      expect(failures).toEqual([])
      expect(answered).toBeGreaterThan(0)
      // Some searches were answered while the segment was built: the build is off the answering thread.
      expect(answeredWhileBuilding).toBeGreaterThan(0)
      // Every added page is found, with its own snippet, beside the snapshot's pages.
      expect(await links(server, "zqadded7")).toEqual([`${site.origin}/p7`])
      expect((await links(server, `${words[3]} page 3`)).length).toBeGreaterThan(0)

      // A request without the option keeps the envelope as it was.
      expect((await post(server, "webFetch", { url: `${site.origin}/p1` })).body.extra).toBeNull()

      // The same URL again with new content is one page, the newer.
      bodies["/p5"] = html("Added page 5, again", "The word zqrenewed is here now.")
      expect((await add(server, "/p5")).body.extra).toEqual({ index: { added: true } })
      expect(await eventually(async () => (await links(server, "zqrenewed")).length === 1)).toBe(true)
      expect(await links(server, "zqadded5")).toEqual([])

      // A reload (of a snapshot that now has one more page) keeps the added pages.
      writeFileSync(snapshot, withMarker)
      await server.reload()
      expect(await links(server, "zqmarker")).toEqual(["https://docs.example/marker"])
      expect(await links(server, "zqadded9")).toEqual([`${site.origin}/p9`])
      expect(await links(server, "zqrenewed")).toEqual([`${site.origin}/p5`])
      expect(readFileSync(addedPagesPath(snapshot), "utf8").split("\n").filter((l) => l.includes("zqadded9"))).toHaveLength(1)

      // An index run (another process, as `periscope index` is) takes the added pages into the snapshot; at the next reload the server lets go of them.
      const source = join(dir, "more.jsonl")
      writeFileSync(source, `${JSON.stringify({ url: "https://docs.example/more", title: "More", text: "zqmore" })}\n`)
      const run = await execFileAsync(process.execPath, ["adapters/node/bin.ts", "index", source, "--out", snapshot], { cwd: root, env: { ...process.env, PERISCOPE_DATA_DIR: dir, NO_COLOR: "1" } })
      expect(`${run.stdout}${run.stderr}`).toContain(`${(PAGES + 1 + 30 + 1).toLocaleString("en-US")} documents`)
      await server.reload()
      expect(await links(server, "zqmore")).toEqual(["https://docs.example/more"])
      expect(await eventually(async () => !existsSync(addedPagesPath(snapshot)))).toBe(true)
      expect(await links(server, "zqadded9")).toEqual([`${site.origin}/p9`])
      expect(await links(server, "zqrenewed")).toEqual([`${site.origin}/p5`])

      // The heap is back near its level: the segment's pages went with it.
      adding = false
      expect(heapAfterGc()).toBeLessThan(heapBefore * 1.5)

      // A page added now is journaled, and a restart finds it.
      expect((await add(server, "/p31")).body.extra).toEqual({ index: { added: true } })
      expect(await eventually(async () => (await links(server, "zqadded31")).length === 1)).toBe(true)
      await server.close()
      server = await startServer({})
      expect(await eventually(async () => (await links(server, "zqadded31")).length === 1)).toBe(true)
      expect(await links(server, "zqadded9")).toEqual([`${site.origin}/p9`])
    } finally {
      await server.close()
    }
  }, 600_000)

  it("refuses pages past the bounds, saying why, and answers the fetch", async () => {
    rmSync(addedPagesPath(snapshot), { force: true })
    const server = await startServer({ addToIndexPerMinute: 2, addedPagesMax: 3, addedBytesMax: 65_536 })
    const refusal = async (path: string, key: string) => {
      const { status, body } = await add(server, path, key)
      expect(status).toBe(200)
      expect(body.data.url).toBe(`${site.origin}${path}`)
      return body.extra.index
    }
    try {
      expect(await refusal("/p32", KEY_A)).toEqual({ added: true })
      expect(await refusal("/p33", KEY_A)).toEqual({ added: true })
      // The key's minute is used up; another key may still add.
      const limited = await refusal("/p34", KEY_A)
      expect(limited).toMatchObject({ added: false, reason: "rate_limited" })
      expect(limited.message).toContain("fetch.addToIndexPerMinute")
      expect(limited.message).toContain("fetched but not added")
      expect(await refusal("/p34", KEY_B)).toEqual({ added: true })
      // Three pages are all the index may add.
      const full = await refusal("/p35", KEY_B)
      expect(full).toMatchObject({ added: false, reason: "full" })
      expect(full.message).toContain("fetch.addedPagesMax")
      // A page it holds may be added again: still three pages.
      expect(await refusal("/p32", KEY_C)).toEqual({ added: true })
      const huge = await refusal("/huge", KEY_C)
      expect(huge).toMatchObject({ added: false, reason: "too_large" })
      expect(huge.message).toContain("fetch.addedBytesMax")
      expect((await post(server, "webFetch", { url: `${site.origin}/empty`, addToIndex: true }, KEY_C)).body.extra.index).toMatchObject({ added: false, reason: "empty" })
      expect(await eventually(async () => (await links(server, "zqadded34")).length === 1)).toBe(true)
      expect(await links(server, "zqadded35")).toEqual([])
      expect(await links(server, "zqhuge")).toEqual([])
    } finally {
      await server.close()
    }
  }, 300_000)
})
