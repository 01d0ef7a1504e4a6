/**
 * Live web search costs, in one run, side by side:
 * 1. Added latency of fusion: the local engine and three provider stand-ins (Brave, Serper,
 *    Exa shapes on loopback, answering after 5, 10 and 20 ms) asked together, one request at a
 *    time, uncached. Per request: the whole federated answer minus its slowest source (both
 *    timed inside the request), p50 and p99; beside it the slowest provider called alone.
 *    Target: added p50 under 1 ms.
 * 2. Cache-hit throughput: the federated search answering from its cache, beside the local
 *    engine alone over the same index (Cranfield's 1,400 abstracts, or the sample pages when
 *    the collection is missing), sequential queries per second.
 *
 *   node test/bench/search-upstreams.ts [--requests 300] [--hits 20000]
 *
 * Two cores shared: compare the columns, not the absolute numbers.
 */
import { parseArgs } from "node:util"
import { Clock, Effect, Layer } from "effect"
import * as UndiciHttpClient from "../../adapters/node/undiciHttpClient.ts"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { federatedLayer, makeProvider, type ProviderSettings } from "../../core/backends/search/SearchProviders.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { defaultFederationSettings, FederatedSearch } from "../../core/search/FederatedSearch.ts"
import type { ExplainExtra } from "../../core/search/Provenance.ts"
import { WebSearch } from "../../core/search/WebSearch.ts"
import { ResultCache } from "../../core/store/ResultCache.ts"
import { startStandIn, type StandIn, type StandInKind } from "../support/searchProviders.ts"
import { loadCollection } from "./support/smart.ts"
import { percentile } from "./support/stats.ts"

const { values } = parseArgs({ options: { requests: { type: "string", default: "300" }, hits: { type: "string", default: "20000" } } })
const REQUESTS = Number(values.requests)
const HITS = Number(values.hits)

const ms = (x: number) => x.toFixed(3)

// --- the local index ----------------------------------------------------------------------------
const loaded = loadCollection("cranfield")
const corpus = loaded._tag === "Missing"
  ? { name: "sample pages", docs: sampleDocuments, queries: ["search engine", "chat completions", "index snapshot"] }
  : {
    name: "Cranfield",
    docs: loaded.collection.documents.map((d) => ({ url: `https://cranfield.ir.invalid/doc/${d.id}`, title: d.title, text: d.text })),
    queries: loaded.collection.queries.map((q) => q.text.replace(/["]/g, " ").replace(/(^|\s)[-+]+/g, " ").trim())
  }
const builder = new IndexBuilder()
builder.add(corpus.docs)
const engine = EngineSearch.layer(builder.build())

// --- provider stand-ins --------------------------------------------------------------------------
const page = (kind: string, i: number) => ({ title: `${kind} result ${i}`, url: `https://${kind}.example/${i}?utm_source=x`, snippet: `snippet ${i} from ${kind}`, date: "2 days ago" })
const delays: ReadonlyArray<[StandInKind, number]> = [["brave", 5], ["serper", 10], ["exa", 20]]
const standIns: Array<StandIn> = []
for (const [kind, delay] of delays) {
  const s = await startStandIn(kind, Array.from({ length: 20 }, (_, i) => page(i % 3 === 0 ? "shared" : kind, i)))
  s.behave({ kind: "slow", ms: delay })
  standIns.push(s)
}
const providers: Array<ProviderSettings> = standIns.map((s) => ({ name: s.kind, kind: s.kind, baseUrl: s.url, weight: 1, timeoutMs: 5000 }))
const platform = UndiciHttpClient.layer

const federation = (cache: Layer.Layer<ResultCache>) =>
  Layer.merge(federatedLayer(providers, { ...defaultFederationSettings, deadlineMs: 5000 }).pipe(Layer.provide(Layer.mergeAll(engine, cache, platform))), engine)

const nowMs = Effect.map(Clock.currentTimeNanos, (n) => Number(n) / 1e6)

try {
  // 1. added latency ------------------------------------------------------------------------------
  const latency = await Effect.runPromise(Effect.gen(function*() {
    const f = yield* FederatedSearch
    const slowest = yield* makeProvider(providers[2]!)
    const added: Array<number> = [], total: Array<number> = [], alone: Array<number> = []
    for (let i = 0; i < REQUESTS + 20; i++) {
      const keywords = `${corpus.queries[i % corpus.queries.length]} ${i}`
      const t0 = yield* nowMs
      const answer = yield* f.web({ keywords, num: 10, explain: true })
      const t1 = yield* nowMs
      yield* slowest.web({ keywords, num: 10 })
      const t2 = yield* nowMs
      if (i < 20) continue // warm-up
      const extra = answer.extra as ExplainExtra
      const slowestSource = Math.max(...extra.sources.map((s) => s.ms))
      total.push(t1 - t0)
      added.push(t1 - t0 - slowestSource)
      alone.push(t2 - t1)
    }
    return [added, total, alone].map((xs) => xs.sort((a, b) => a - b))
  }).pipe(Effect.provide(Layer.merge(federation(ResultCache.layerNone), platform))))
  const [added, total, alone] = latency as [Array<number>, Array<number>, Array<number>]

  console.log(`\nAdded latency of fusion (${REQUESTS} requests, one at a time, uncached; local engine over ${corpus.name} + 3 stand-ins at 5/10/20 ms)`)
  console.log("| measure | p50 ms | p99 ms |\n|---|---|---|")
  console.log(`| slowest provider (exa stand-in, 20 ms) called alone | ${ms(percentile(alone, 0.5))} | ${ms(percentile(alone, 0.99))} |`)
  console.log(`| federated answer (4 sources, fused, explained) | ${ms(percentile(total, 0.5))} | ${ms(percentile(total, 0.99))} |`)
  console.log(`| added over the slowest source of the same request | ${ms(percentile(added, 0.5))} | ${ms(percentile(added, 0.99))} |`)
  console.log(`Target: added p50 < 1 ms: ${percentile(added, 0.5) < 1 ? "met" : "NOT MET"}`)

  // 2. cache-hit throughput ---------------------------------------------------------------------
  const queries = corpus.queries.slice(0, 50)
  const throughput = await Effect.runPromise(Effect.gen(function*() {
    const f = yield* FederatedSearch
    const local = yield* WebSearch
    for (const keywords of queries) yield* f.web({ keywords, num: 10 }) // fill the cache
    const run = (search: (keywords: string) => Effect.Effect<unknown, unknown>) =>
      Effect.gen(function*() {
        for (let i = 0; i < 500; i++) yield* search(queries[i % queries.length]!)
        const t0 = yield* nowMs
        for (let i = 0; i < HITS; i++) yield* search(queries[i % queries.length]!)
        return (HITS * 1000) / ((yield* nowMs) - t0)
      })
    const cached = yield* run((keywords) => f.web({ keywords, num: 10 }))
    const engineAlone = yield* run((keywords) => local.search({ keywords, num: 10 }))
    const cached2 = yield* run((keywords) => f.web({ keywords, num: 10 }))
    return { cached: Math.max(cached, cached2), engineAlone }
  }).pipe(Effect.provide(federation(ResultCache.layer({ capacity: 1000 })))))

  console.log(`\nCache-hit throughput (${HITS} sequential queries over ${queries.length} distinct ones, num 10)`)
  console.log("| path | queries/s | ratio |\n|---|---|---|")
  console.log(`| local engine alone (${corpus.name}, ${corpus.docs.length} documents) | ${Math.round(throughput.engineAlone)} | 1.00 |`)
  console.log(`| federated search, cache hit (local + 3 providers) | ${Math.round(throughput.cached)} | ${(throughput.cached / throughput.engineAlone).toFixed(2)} |`)
} finally {
  for (const s of standIns) await s.close()
}
