/**
 * The engines of the search benchmark behind one interface: build from documents, answer
 * a query with its 10 best results, save to bytes and load back. All index the same three
 * fields (title, body text, URL words), weight the title the same and use English stemming
 * with stop words, each through its own documented options. Periscope's answers also carry
 * query-dependent snippets; the peers return stored title and URL only.
 */
import { create, insertMultiple, load as oramaLoad, save as oramaSave, search as oramaSearch } from "@orama/orama"
import { Document as FlexDocument, Encoder } from "flexsearch"
import englishPreset from "flexsearch/lang/en"
import { Effect } from "effect"
import MiniSearch from "minisearch"
import { stemmer } from "stemmer"
import { openInPlace } from "../../../adapters/node/snapshotFile.ts"
import { englishStopWords } from "../../../core/index/analysis/StopWords.ts"
import type { IndexDocument } from "../../../core/index/Document.ts"
import { defaultEngineOptions, type EngineOptions, IndexBuilder } from "../../../core/index/IndexBuilder.ts"
import type { SearchIndex } from "../../../core/index/SearchIndex.ts"
import { decodeSnapshot, encodeSnapshot } from "../../../core/index/Snapshot.ts"
import { urlWords } from "../../../core/index/UrlNormalizer.ts"
import { warmUp, type WarmUpReport } from "../../../core/index/WarmUp.ts"

export interface BenchEngine {
  readonly name: string
  build(docs: ReadonlyArray<IndexDocument>): Promise<void>
  /** Runs one query; returns how many results came back (at most 10). */
  search(query: string): number | Promise<number>
  /** The same top 10 without snippets (ids, titles, URLs), for engines that make snippets. */
  readonly searchBare?: (query: string) => number
  save(): Promise<Uint8Array>
  /** Loads saved bytes into a fresh index, ready to query. */
  load(bytes: Uint8Array): Promise<unknown>
  /**
   * Opens the saved file as the engine's server does, where that is not load(readFile(path)), and
   * answers the queries from it from then on (what a server searches). Resolves once it can answer;
   * `settled` once its background work is over.
   */
  readonly open?: (path: string) => Promise<{ readonly settled: Promise<unknown> }>
  /** After open: the warm-up its server does before it serves, if any (Periscope: core/index/WarmUp.ts, as `npm start`). */
  readonly warm?: () => WarmUpReport
}

const { title: titleBoost, url: urlBoost } = defaultEngineOptions.fieldWeights
const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder()

/**
 * Periscope with its defaults, or with other engine options under another name (the same bench
 * code).
 */
const periscopeWith = (name: string, options?: EngineOptions) => (): BenchEngine => {
  let index: SearchIndex | undefined
  return {
    name,
    async build(docs) {
      const builder = new IndexBuilder(options)
      for (let i = 0; i < docs.length; i += 5000) builder.add(docs.slice(i, i + 5000))
      index = builder.build()
    },
    search: (query) => index!.search(query, 10).hits.length,
    searchBare: (query) => index!.rank(query, 10).length,
    save: async () => encodeSnapshot(index!),
    load: async (bytes) => decodeSnapshot(bytes),
    // `npm start` opens the file with the page text left on disk (adapters/node/snapshotFile.ts)
    // and reads the text into memory in the background.
    async open(path) {
      const opened = await Effect.runPromise(openInPlace(path))
      index = opened.index
      return opened
    },
    warm: () => warmUp(index!)
  }
}

const processTerm = (term: string): string | null => {
  const lower = term.toLowerCase()
  return englishStopWords.has(lower) ? null : stemmer(lower)
}

interface PeerDoc {
  readonly id: number
  readonly title: string
  readonly text: string
  readonly url: string
  readonly urlText: string
}

const peerDocs = (docs: ReadonlyArray<IndexDocument>): Array<PeerDoc> =>
  docs.map((d, id) => ({ id, title: d.title, text: d.text, url: d.url, urlText: urlWords(d.url) }))

const miniOptions = {
  fields: ["title", "text", "urlText"],
  storeFields: ["title", "url"],
  processTerm,
  searchOptions: { boost: { title: titleBoost, urlText: urlBoost }, combineWith: "OR" as const }
}

const miniSearch = (): BenchEngine => {
  let mini: MiniSearch<PeerDoc> | undefined
  return {
    name: "MiniSearch 7",
    async build(docs) {
      mini = new MiniSearch<PeerDoc>(miniOptions)
      mini.addAll(peerDocs(docs))
    },
    search: (query) => mini!.search(query).slice(0, 10).length,
    save: async () => utf8.encode(JSON.stringify(mini)),
    load: async (bytes) => MiniSearch.loadJSON(utf8Decoder.decode(bytes), miniOptions)
  }
}

const oramaSchema = { title: "string", text: "string", urlText: "string" } as const
const oramaComponents = { tokenizer: { language: "english", stemming: true, stopWords: [...englishStopWords] } }

const orama = (): BenchEngine => {
  let db: ReturnType<typeof create<typeof oramaSchema>> | undefined
  return {
    name: "Orama 3",
    async build(docs) {
      db = create({ schema: oramaSchema, components: oramaComponents })
      // Orama keeps whole documents; the URL rides along unindexed for the results.
      await insertMultiple(db, peerDocs(docs).map((d) => ({ id: String(d.id), title: d.title, text: d.text, urlText: d.urlText, url: d.url })), 5000)
    },
    async search(query) {
      const result = oramaSearch(db!, {
        term: query,
        properties: ["title", "text", "urlText"],
        boost: { title: titleBoost, urlText: urlBoost },
        limit: 10
      })
      const answer = result instanceof Promise ? await result : result
      return answer.hits.length
    },
    save: async () => utf8.encode(JSON.stringify(await oramaSave(db!))),
    async load(bytes) {
      const fresh = create({ schema: oramaSchema, components: oramaComponents })
      await oramaLoad(fresh, JSON.parse(utf8Decoder.decode(bytes)))
      return fresh
    }
  }
}

const flexOptions = () => ({
  document: { id: "id", index: ["title", "text", "urlText"], store: ["title", "url"] },
  encoder: new Encoder(englishPreset),
  tokenize: "strict" as const
})

const flexSearch = (): BenchEngine => {
  let index: FlexDocument<any> | undefined
  return {
    name: "FlexSearch 0.8",
    async build(docs) {
      index = new FlexDocument<any>(flexOptions() as any)
      for (const doc of peerDocs(docs)) index.add(doc)
    },
    search(query) {
      // suggest: results need not hold every word (ranked OR); merge: one list across fields.
      const results = index!.search(query, { limit: 10, suggest: true, enrich: true, merge: true } as any) as unknown as Array<unknown>
      return Math.min(10, results.length)
    },
    async save() {
      const parts: Record<string, string> = {}
      await index!.export((key: string | number, data: string) => {
        parts[String(key)] = data
      })
      return utf8.encode(JSON.stringify(parts))
    },
    async load(bytes) {
      const fresh = new FlexDocument<any>(flexOptions() as any)
      const parts = JSON.parse(utf8Decoder.decode(bytes)) as Record<string, string>
      for (const [key, data] of Object.entries(parts)) await fresh.import(key, data)
      return fresh
    }
  }
}

const periscope = periscopeWith("Periscope")
/**
 * Plain BM25F: no proximity re-ranking of the best 15 (the ranking model closest to Xapian's
 * BM25), to show what that re-ranking costs in speed; relevance.ts shows what it gives in nDCG@10.
 */
const periscopeNoProximity = periscopeWith("Periscope, no proximity", { proximity: 0 })

export const benchEngines: Record<string, () => BenchEngine> = {
  periscope,
  "periscope-no-proximity": periscopeNoProximity,
  minisearch: miniSearch,
  orama,
  flexsearch: flexSearch
}
