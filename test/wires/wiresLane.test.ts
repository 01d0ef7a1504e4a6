/**
 * The Node server's express lane answers /tavily and /searxng exactly as the full stack does:
 * the same requests to a server with the lane and one without, the same statuses and bodies
 * (but for the time taken and the request id a Tavily answer carries), and the lane really
 * answered them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { InProcessServer } from "../support/servers.ts"
import { sourcesEchoChat, startWireServer, startWireWorld, WIRE_KEY, type WireWorld } from "./wireServers.ts"

let world: WireWorld
let lane: InProcessServer
let full: InProcessServer

beforeAll(async () => {
  world = await startWireWorld()
  lane = await startWireServer({ config: world.config, chat: sourcesEchoChat })
  full = await startWireServer({ config: world.config, chat: sourcesEchoChat, expressLane: false })
})

afterAll(async () => {
  await lane?.close()
  await full?.close()
  await world?.close()
})

const bearer = { authorization: `Bearer ${WIRE_KEY}` }
const json = { ...bearer, "content-type": "application/json" }

const requests = (): Array<readonly [string, string, RequestInit]> => [
  ["tavily basic", "/tavily/search", { method: "POST", headers: json, body: JSON.stringify({ query: "telescope reactor", max_results: 3 }) }],
  ["tavily with everything", "/tavily/search", {
    method: "POST",
    headers: json,
    body: JSON.stringify({ query: "telescope", search_depth: "advanced", include_raw_content: "text", include_answer: true, include_images: true, exclude_domains: ["example.org"] })
  }],
  ["tavily body key", "/tavily/search", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "web search", api_key: WIRE_KEY }) }],
  ["tavily extract", "/tavily/extract", { method: "POST", headers: json, body: JSON.stringify({ urls: [world.alphaUrl, "http://10.0.0.1/"] }) }],
  ["searxng GET", "/searxng/search?q=telescope&format=json&language=en-US&safesearch=1", { headers: bearer }],
  ["searxng images", "/searxng/search?q=telescope&categories=images,general", { headers: bearer }],
  ["searxng POST", "/searxng/search", { method: "POST", headers: { ...bearer, "content-type": "application/x-www-form-urlencoded" }, body: "q=telescope&engines=web" }]
]

/** The answer without what differs on every request by nature. */
const comparable = (body: any) => {
  if (body === null || typeof body !== "object" || !("request_id" in body)) return body
  const { response_time: _time, request_id: _id, ...rest } = body
  return rest
}

describe("the express lane against the full stack", () => {
  it("answers each wire's requests the same way, and answered them itself", async () => {
    for (const [name, path, init] of requests()) {
      const before = lane.answeredInLane()
      const a = await fetch(lane.url + path, init)
      const b = await fetch(full.url + path, init)
      expect(a.status, name).toBe(b.status)
      expect(a.status, name).toBe(200)
      expect(a.headers.get("content-type"), name).toBe(b.headers.get("content-type"))
      expect(comparable(await a.json()), name).toEqual(comparable(await b.json()))
      expect(lane.answeredInLane(), name).toBe(before + 1)
      expect(full.answeredInLane(), name).toBe(0)
    }
  })
})
