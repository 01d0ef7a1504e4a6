/**
 * What `content: "highlights"` adds to a web search answered from the local index: the Debian
 * documentation passages of the search bench (test/bench/support/passageCorpus.ts; `--pages`:
 * the same pages whole, texts of 9,000 characters and more), the engine built in this process,
 * FederatedSearch as the application composes it (appLayer: each result's text read through
 * StoredPages, its passages chosen by Highlights). Every query is asked with snippets and with
 * highlights, the order alternating from one query to the next, after a warm-up round; each
 * mode's latencies over all rounds give its p50 and p99. Target: highlights add at most 1 ms at
 * p50. `--text` adds content "text" (the page's text, cut to its default length) for comparison.
 *
 * Run: node test/bench/searchContent.ts [--pages] [--rounds 3] [--text]
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { Effect, Layer, ManagedRuntime } from "effect"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { appLayer } from "../../core/app/Application.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { FederatedSearch } from "../../core/search/FederatedSearch.ts"
import type { SearchQuery } from "../../core/search/SearchQuery.ts"
import { makeBenchQueries } from "./support/benchQueries.ts"
import { ensurePassageCorpus } from "./support/passageCorpus.ts"
import { percentile } from "./support/stats.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values } = parseArgs({ options: { pages: { type: "boolean", default: false }, rounds: { type: "string", default: "3" }, text: { type: "boolean", default: false } } })
const rounds = wholeNumberOption("--rounds", values.rounds)
const unit = values.pages ? "pages" : "passages"

const corpus = ensurePassageCorpus(values.pages)
if (corpus._tag === "Missing") {
  if (process.env.CI === "true") throw new Error(`search content benchmark corpus missing under CI=true: ${corpus.reason}`)
  console.log(`[skip] Debian documentation corpus unavailable: ${corpus.reason}`)
  process.exit(0)
}

const documents: Array<IndexDocument> = readFileSync(corpus.path, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as IndexDocument)
const queries = makeBenchQueries(documents.map((d) => d.title))
const keywords = [...queries.andLike, ...queries.orLike]
const built = performance.now()
const builder = new IndexBuilder()
builder.add(documents)
const index = builder.build()
const meanChars = Math.round(documents.reduce((n, d) => n + d.text.length, 0) / documents.length)
console.log(`corpus: ${documents.length} ${unit}, ${meanChars} characters of text on average, built in ${((performance.now() - built) / 1000).toFixed(1)} s; ${keywords.length} queries (AND-like and OR-like), num 10, ${rounds} rounds`)

const services = appLayer(settingsOf({}), recordsFromPlainKeys(["bench-key-0123456789"]), {
  search: { _tag: "Layer", layer: EngineSearch.layer(index) },
  chatModel: ScriptedChat.layer(unconfiguredChat)
}).pipe(Layer.provide(nodePlatform), Layer.orDie)
const runtime = ManagedRuntime.make(services)
const search = await runtime.runPromise(Effect.service(FederatedSearch))

type Mode = "snippet" | "highlights" | "text"
const modes: ReadonlyArray<Mode> = values.text ? ["snippet", "highlights", "text"] : ["snippet", "highlights"]
const queryOf = (words: string, mode: Mode): SearchQuery => (mode === "snippet" ? { keywords: words, num: 10 } : { keywords: words, num: 10, content: mode })

/** One search's milliseconds, and its results' characters of content (a check that the mode did its work). */
const timed = async (words: string, mode: Mode): Promise<{ readonly ms: number; readonly chars: number }> => {
  const started = performance.now()
  const answer = await runtime.runPromise(search.web(queryOf(words, mode)))
  const ms = performance.now() - started
  let chars = 0
  for (const r of answer.data.organic) chars += r.content?.length ?? 0
  return { ms, chars }
}

// Warm-up: the query path and the highlight path compiled, the stored texts' pages touched once.
for (const words of keywords) for (const mode of modes) await timed(words, mode)

const latencies = new Map<Mode, Array<number>>(modes.map((m) => [m, []]))
const contentChars = new Map<Mode, number>(modes.map((m) => [m, 0]))
for (let round = 0; round < rounds; round++) {
  for (let q = 0; q < keywords.length; q++) {
    // The order turns with every query, so neither mode always runs on a cache the other warmed.
    const shift = (q + round) % modes.length
    for (let k = 0; k < modes.length; k++) {
      const mode = modes[(k + shift) % modes.length]!
      const { ms, chars } = await timed(keywords[q]!, mode)
      latencies.get(mode)!.push(ms)
      contentChars.set(mode, contentChars.get(mode)! + chars)
    }
  }
}
await runtime.dispose()

const fixed = (x: number) => x.toFixed(3)
const stats = new Map(modes.map((mode) => {
  const sorted = [...latencies.get(mode)!].sort((a, b) => a - b)
  return [mode, { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), chars: contentChars.get(mode)! / sorted.length }] as const
}))
console.log(`\n| content | searches | p50 (ms) | p99 (ms) | characters of content per answer |\n|---|---|---|---|---|`)
for (const mode of modes) {
  const s = stats.get(mode)!
  console.log(`| ${mode} | ${latencies.get(mode)!.length} | ${fixed(s.p50)} | ${fixed(s.p99)} | ${Math.round(s.chars)} |`)
}
const added = stats.get("highlights")!.p50 - stats.get("snippet")!.p50
console.log(`\nTarget: highlights add at most 1 ms at p50 over snippets (${unit}): +${fixed(added)} ms (${added <= 1 ? "met" : "MISS"})`)
if (added > 1) process.exitCode = 1
