/**
 * The stall rig, shared by the stall test (test/fault/stall.e2e.test.ts: what must hold) and its
 * bench (test/bench/stall.ts: the table of timings): the real Node server as a child process
 * (`node adapters/node/main.ts`, its own data directory and config file), a loopback host the
 * fetch allow-list admits serving hostile pages generated here (test/fetch/hostilePages.ts),
 * a model-server stand-in answering hostile tool calls, a steady load of searches at a fixed
 * rate, and the resident memory of the server and its job processes: sampled from /proc for
 * the peak, and, for the server, read through its inspector after a full collection
 * (test/fault/inspector.ts) before and after, since RSS alone also holds garbage the collector
 * has not come for yet.
 *
 * `measure` runs one hostile request while the searches go on: the searches sent from the
 * moment it goes out until it is answered are its searches; memory is read before it, at its
 * peak, and after it (the first reading back within 20% of the one before, or the last one
 * after a settling time: job processes ended or replaced hand their memory back at once).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { largeHtml, manyPagesPdf, nestedHtml, pdfBomb } from "../fetch/hostilePages.ts"
import { type MockUpstream, startMockUpstream } from "../support/mockUpstream.ts"
import { authHeaders, type ChildServer, freePort, spawnServer, TEST_KEY } from "../support/servers.ts"
import { memoryAfterGc } from "./inspector.ts"

/** One answer as a client sees it: the status and the error's name (search envelope or OpenAI body). */
export interface Answer {
  readonly status: number
  readonly type: string
  readonly message: string
}

export interface SearchStats {
  /** While the hostile request ran. */
  readonly sent: number
  /** Over the whole measurement (from half a second before the hostile request to its answer). */
  readonly total: number
  /** Searches that did not answer 200 (a status, a network error or no answer within 10 s). */
  readonly failed: number
  readonly failures: ReadonlyArray<string>
  readonly p50: number
  readonly p99: number
  readonly max: number
}

export interface Measured {
  readonly name: string
  readonly answers: ReadonlyArray<Answer>
  /** From the hostile request going out to its (last) answer. */
  readonly ms: number
  readonly searches: SearchStats
  /** Resident set of the server process and its job processes, in bytes. */
  readonly memory: { readonly before: number; readonly peak: number; readonly after: number; readonly settledMs: number }
}

export interface StallCase {
  readonly name: string
  /** What the docs say the request gets, as the table shows it. */
  readonly documented: string
  readonly fire: (rig: StallRig) => Promise<ReadonlyArray<Answer>>
}

export interface StallRig {
  readonly server: ChildServer
  /** The hostile host's origin (allowed by fetch.allowHosts). */
  readonly site: string
  readonly upstream: MockUpstream
  readonly webFetch: (body: Record<string, unknown>) => Promise<Answer>
  readonly chat: (tool: keyof typeof TOOLS) => Promise<Answer>
  readonly measure: (test: StallCase) => Promise<Measured>
  readonly close: () => Promise<void>
}

/** Searches per second while a hostile request runs. */
export const SEARCH_RATE = 20
/** Resident memory within this factor of its level before counts as returned. */
export const MEMORY_MARGIN = 1.2
/** How long memory is given to return after the hostile request is answered. */
const SETTLE_MS = 20_000
const LARGE_PAGES = 10
const LARGE_PAGE_BYTES = 9 * 1024 * 1024

const numbers = Array.from({ length: 60_000 }, (_, i) => i)
/** Tool calls the stand-in model answers with, by tool name, and each tool's schema. */
const TOOLS = {
  unique: {
    arguments: JSON.stringify({ xs: numbers }),
    parameters: { type: "object", properties: { xs: { type: "array", uniqueItems: true } } }
  },
  // Missing commas after whitespace: each one makes jsonrepair copy all it has written so far.
  repair: {
    arguments: `{"xs": [${"1 ".repeat(400_000)}]`,
    parameters: { type: "object", properties: { xs: { type: "array" } } }
  }
} as const

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Resident set of a process, in bytes (Linux); 0 once it is gone. */
export const residentBytes = (pid: number): number => {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024
  } catch {
    return 0
  }
}

/** The server's child processes (its job workers). */
const childrenOf = (pid: number): Array<number> => {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter((s) => s !== "").map(Number))
  } catch {
    return []
  }
}

/** Resident set of the server and its job processes together. */
const treeResident = (pid: number): number => residentBytes(pid) + childrenOf(pid).reduce((sum, child) => sum + residentBytes(child), 0)

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

const answerOf = async (response: Response): Promise<Answer> => {
  const body = await response.json().catch(() => ({})) as any
  if (response.status === 200) return { status: 200, type: "", message: "" }
  return {
    status: response.status,
    type: body?.exception?.type ?? body?.error?.code ?? "",
    message: body?.message ?? body?.error?.message ?? ""
  }
}

/** The hostile host: every page generated once, served as a site would. */
const serveHostile = async (): Promise<{ readonly origin: string; readonly host: string; close(): Promise<void> }> => {
  const routes = new Map<string, { readonly body: Uint8Array | string; readonly type: string }>([
    ["/nested.html", { body: nestedHtml(200_000), type: "text/html; charset=utf-8" }],
    ["/bomb.pdf", { body: await pdfBomb(300 * 1024 * 1024), type: "application/pdf" }],
    ["/pages.pdf", { body: manyPagesPdf(20_000), type: "application/pdf" }],
    ["/ordinary.html", { body: "<html><head><title>Ordinary</title></head><body><main><h1>Ordinary</h1><p>A page of ordinary size, read in full.</p></main></body></html>", type: "text/html" }],
    ["/ordinary.pdf", { body: manyPagesPdf(2), type: "application/pdf" }],
    ...Array.from({ length: LARGE_PAGES }, (_, i) => [`/large-${i}.html`, { body: largeHtml(LARGE_PAGE_BYTES, i, "prose"), type: "text/html" }] as const)
  ])
  const sockets = new Set<Socket>()
  const server: Server = createServer((request, response) => {
    const route = routes.get(new URL(request.url ?? "/", "http://x").pathname)
    if (route === undefined) {
      response.writeHead(404, { "content-type": "text/plain" })
      response.end("not found")
      return
    }
    response.writeHead(200, { "content-type": route.type })
    response.end(route.body)
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => done())
      })
  }
}

/** Searches at a fixed rate until stopped; each outcome kept with the time it was sent. */
const searchLoad = (url: string) => {
  const outcomes: Array<{ readonly sentAt: number; readonly ms: number; readonly ok: boolean; readonly failure?: string }> = []
  const inFlight = new Set<Promise<void>>()
  let running = true
  const keywords = ["error handling", "stream", "json schema", "retry", "parser", "http client", "cache", "promise"]
  let next = 0
  const one = () => {
    const sentAt = performance.now()
    const request = fetch(`${url}/api/search/webSearch`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ keywords: keywords[next++ % keywords.length], num: 5 }),
      signal: AbortSignal.timeout(10_000)
    }).then(
      async (response) => {
        await response.arrayBuffer()
        outcomes.push({ sentAt, ms: performance.now() - sentAt, ok: response.status === 200, ...(response.status === 200 ? {} : { failure: `status ${response.status}` }) })
      },
      (error: Error) => void outcomes.push({ sentAt, ms: performance.now() - sentAt, ok: false, failure: error.name === "TimeoutError" ? "no answer within 10 s" : error.message })
    )
    inFlight.add(request)
    void request.finally(() => inFlight.delete(request))
  }
  const interval = 1000 / SEARCH_RATE
  const loop = (async () => {
    let due = performance.now()
    while (running) {
      one()
      due += interval
      await sleep(Math.max(0, due - performance.now()))
    }
  })()
  return {
    outcomes,
    stop: async () => {
      running = false
      await loop
      await Promise.all(inFlight)
    }
  }
}

const statsOf = (outcomes: ReadonlyArray<{ readonly ms: number; readonly ok: boolean; readonly failure?: string }>): SearchStats => {
  const sorted = outcomes.map((o) => o.ms).sort((a, b) => a - b)
  const failures = outcomes.filter((o) => !o.ok).map((o) => o.failure ?? "failed")
  return { sent: outcomes.length, total: outcomes.length, failed: failures.length, failures: [...new Set(failures)], p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? 0 }
}

export const startStallRig = async (): Promise<StallRig> => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-stall-"))
  const site = await serveHostile()
  const upstream = await startMockUpstream({
    respond: (body) => {
      const name = body.tools?.[0]?.function?.name as keyof typeof TOOLS
      return { toolCalls: [{ name, arguments: TOOLS[name]?.arguments ?? "{}" }] }
    }
  })
  const config = join(dir, "config.json")
  writeFileSync(config, JSON.stringify({
    // Every request is read anew: the cache would answer a repeated hostile page without work.
    fetch: { allowHosts: [site.host], cacheTtlSeconds: 0 },
    chat: {
      upstreams: { up: { baseUrl: upstream.url, retries: { max: 0, baseDelayMs: 10 } } },
      models: [{ name: "m", targets: [{ upstream: "up", model: "mock-model" }] }]
    },
    rateLimitPerMinute: 1_000_000
  }))
  const inspectPort = await freePort()
  // `npm start`'s entry, with an inspector on loopback to read its memory after a collection.
  const server = await spawnServer(process.execPath, [`--inspect=127.0.0.1:${inspectPort}`, "adapters/node/main.ts"], {
    PERISCOPE_API_KEYS: TEST_KEY,
    PERISCOPE_DATA_DIR: join(dir, "data"),
    PERISCOPE_CONFIG: config
  }, { timeoutMs: 120_000 })
  const pid = server.child.pid!

  const webFetch = async (body: Record<string, unknown>) =>
    answerOf(await fetch(`${server.url}/api/search/webFetch`, { method: "POST", headers: authHeaders(), body: JSON.stringify(body) }))
  const chat = async (tool: keyof typeof TOOLS) =>
    answerOf(await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "go" }], tools: [{ type: "function", function: { name: tool, parameters: TOOLS[tool].parameters } }] })
    }))

  // Warm: the job threads have loaded what reading HTML and PDF needs, the search path is compiled.
  for (const path of ["/ordinary.html", "/ordinary.pdf"]) {
    const answer = await webFetch({ url: `${site.origin}${path}` })
    if (answer.status !== 200) throw new Error(`warm-up fetch of ${path} answered ${answer.status} ${answer.message}\n${server.output()}`)
  }
  const warm = searchLoad(server.url)
  await sleep(3000)
  await warm.stop()

  /** Resident memory of the server once its garbage is collected, and of its job processes. */
  const level = async () => {
    const server = (await memoryAfterGc(inspectPort)).rssMb * 1024 * 1024
    return server + childrenOf(pid).reduce((sum, child) => sum + residentBytes(child), 0)
  }

  const measure = async (test: StallCase): Promise<Measured> => {
    const before = await level()
    let peak = before
    const sampler = setInterval(() => {
      peak = Math.max(peak, treeResident(pid))
    }, 50)
    const load = searchLoad(server.url)
    await sleep(500)
    const firedAt = performance.now()
    const answers = await test.fire(rig)
    const answeredAt = performance.now()
    await load.stop()
    clearInterval(sampler)
    peak = Math.max(peak, treeResident(pid))
    const during = load.outcomes.filter((o) => o.sentAt >= firedAt && o.sentAt <= answeredAt)
    const settling = performance.now()
    let after = await level()
    while (after > before * MEMORY_MARGIN && performance.now() - settling < SETTLE_MS) {
      await sleep(500)
      after = await level()
    }
    return {
      name: test.name,
      answers,
      ms: answeredAt - firedAt,
      // The searches while the hostile request ran, and every search of the run for failures.
      searches: { ...statsOf(during), total: load.outcomes.length, failed: statsOf(load.outcomes).failed, failures: statsOf(load.outcomes).failures },
      memory: { before, peak, after, settledMs: performance.now() - settling }
    }
  }

  const rig: StallRig = {
    server,
    site: site.origin,
    upstream,
    webFetch,
    chat,
    measure,
    close: async () => {
      await server.close()
      await upstream.close()
      await site.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
  return rig
}

const fetchPage = (path: string) => (rig: StallRig) => rig.webFetch({ url: `${rig.site}${path}` }).then((answer) => [answer])

/** The hostile requests, each with what the docs say it gets. */
export const STALL_CASES: ReadonlyArray<StallCase> = [
  { name: "webFetch: HTML nested 200,000 deep", documented: "413 PageTooLarge (fetch.maxHtmlDepth)", fire: fetchPage("/nested.html") },
  { name: "webFetch: PDF of 1 MB inflating to 300 MB", documented: "413 PageTooLarge (fetch.maxPdfDecodedBytes)", fire: fetchPage("/bomb.pdf") },
  { name: "webFetch: PDF of 20,000 pages", documented: "413 PageTooLarge (fetch.maxPdfPages)", fire: fetchPage("/pages.pdf") },
  {
    name: `webFetch: ${LARGE_PAGES} pages of 9 MB at once`,
    documented: "200, or 504 FetchTimeout past fetch.timeoutMs, or 503 ServerBusy",
    fire: (rig) => Promise.all(Array.from({ length: LARGE_PAGES }, (_, i) => rig.webFetch({ url: `${rig.site}/large-${i}.html` })))
  },
  { name: "chat: uniqueItems over 60,000 items", documented: "502 tool_call_invalid (chat.validation.maxArgumentBytes)", fire: (rig) => rig.chat("unique").then((a) => [a]) },
  { name: "chat: jsonrepair on 800 KB", documented: "502 tool_call_invalid (chat.validation.maxArgumentBytes)", fire: (rig) => rig.chat("repair").then((a) => [a]) },
  {
    name: "webFetch addToIndex: a page into the running index",
    documented: "200, the page searchable once added",
    fire: (rig) => rig.webFetch({ url: `${rig.site}/ordinary.html`, addToIndex: true }).then((a) => [a])
  }
]

/** Whether an answer is the one documented for its case. */
export const isDocumented = (name: string, answer: Answer): boolean => {
  const test = STALL_CASES.find((c) => c.name === name)!
  if (test.name.includes("pages of 9 MB")) {
    return answer.status === 200 || (answer.status === 504 && answer.type === "FetchTimeout") || (answer.status === 503 && answer.type === "ServerBusy")
  }
  if (test.name.startsWith("chat:")) return answer.status === 502 && answer.type === "tool_call_invalid" && answer.message.includes("chat.validation.maxArgumentBytes")
  if (test.name.includes("addToIndex")) return answer.status === 200
  const setting = /\((fetch\.\w+)\)/.exec(test.documented)![1]!
  return answer.status === 413 && answer.type === "PageTooLarge" && answer.message.includes(setting)
}

export { TEST_KEY }
