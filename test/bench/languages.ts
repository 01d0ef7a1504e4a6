/**
 * Analysis by language, measured: GIMP's manual in German, French, Spanish, Italian and Russian
 * (Debian's gimp-help-* packages, fetched with apt at run time; their pages declare no
 * language, and the parts not yet translated are in English), searched with known-item
 * queries made from each translated page: its title (section numbers dropped) and the start of
 * its first sentence, each kept only when it names one page of its language and differs from
 * the English manual's.
 *
 * Per language, MRR (the known page's rank, cut at 100, near-duplicates kept) with
 * - English analysis: every page analysed as English (as before languages; here by declaring en),
 * - declared: every page declaring the manual's language, as a site's <html lang> would,
 * - detected: no page declaring any (eld on a sample of each page), queries without a language,
 * - asked: the same index, queries with `language` (read in it, other pages filtered out),
 * - declared, unstemmed: as declared, with stemming off (stop words kept): what the stemmer costs,
 * first on an index of the one manual, then on one index of all of them with the English
 * manual. Also: what detection made of each manual's pages, what each manual's analysis costs
 * its build, snapshot and searches against English analysis, and what detection costs a build: the
 * search bench's 56k passages built with every page declaring English, and with none declaring
 * a language (each detected), in alternating rounds; and eld's time and agreement by sample length.
 *
 *   node test/bench/languages.ts
 */
import { readFileSync } from "node:fs"
import { detectPageLanguage, pageLanguageSample, pageSampleChars } from "../../core/index/analysis/LanguageDetection.ts"
import { availableParallelism, loadavg } from "node:os"
import type { IndexDocument } from "../../core/index/Document.ts"
import { type EngineOptions, IndexBuilder } from "../../core/index/IndexBuilder.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { htmlToDocument } from "../../core/ingest/HtmlDocument.ts"
import { corePackages, type DocPackage, loadDebianDocs, translatedPackages } from "../support/debianDocs.ts"
import { alignedTable } from "./support/alignedTable.ts"
import { readJsonlLines } from "./support/jsonlLines.ts"
import { ensurePassageCorpus } from "./support/passageCorpus.ts"
import { median } from "./support/stats.ts"

const english = corePackages.find((p) => p.name === "gimp-help-en")!
const manuals: ReadonlyArray<DocPackage & { readonly language: string }> = [{ ...english, language: "en" }, ...translatedPackages]

interface Manual {
  readonly language: string
  /** Pages by their path in the manual. */
  readonly pages: ReadonlyMap<string, IndexDocument>
}

const load = (pkg: DocPackage & { readonly language: string }): Manual | string => {
  const corpus = loadDebianDocs([pkg])
  if (corpus._tag === "Missing") return corpus.reason
  const pages = new Map<string, IndexDocument>()
  for (const page of corpus.pages) {
    const document = htmlToDocument(readFileSync(page.file, "utf8"), page.url)
    pages.set(page.url.slice(pkg.baseUrl.length), { url: document.url, title: document.title, text: document.text })
  }
  return { language: pkg.language, pages }
}

const loaded = manuals.map(load)
const missing = loaded.find((m): m is string => typeof m === "string")
if (missing !== undefined) {
  if (process.env.CI === "true") throw new Error(`languages bench: corpus missing under CI=true: ${missing}`)
  console.log(`[skip] languages bench: GIMP's manuals unavailable (${missing})`)
  process.exit(0)
}
const [englishManual, ...translated] = loaded as Array<Manual>

/** A title without its section number ("2.20. Chiudi tutto" is "Chiudi tutto"). */
const titleQuery = (title: string) => title.replace(/^(?:[\p{L}]+\s)?[\dIVXA-Z]+(?:\.\d+)*\.?\s+/u, "").trim()

/** The first 12 words of the first sentence of the first paragraph of six words or more after the title. */
const sentenceQuery = (page: IndexDocument) => {
  for (const paragraph of page.text.split(/\n\s*\n/)) {
    const words = paragraph.replace(/\s+/g, " ").trim().split(" ")
    if (words.length < 6 || paragraph.trim() === page.title.trim()) continue
    const sentence = paragraph.split(/(?<=[.!?])\s/)[0]!.replace(/\s+/g, " ").trim().split(" ")
    return sentence.slice(0, 12).join(" ")
  }
  return ""
}

/** Query text without the parser's operators: quotes, a leading - or +, site:. */
const plain = (query: string) => query.replace(/["„“”«»]/g, " ").split(/\s+/).map((w) => w.replace(/^[-+]+/, "").replace(/^site:/i, "")).filter((w) => w.length > 0).join(" ")

interface KnownItem {
  readonly query: string
  readonly url: string
}

/** Known items of a manual by one kind of query: those naming one page, and not as the English manual does. */
const knownItems = (manual: Manual, make: (page: IndexDocument) => string): Array<KnownItem> => {
  const byQuery = new Map<string, Array<string>>()
  for (const [path, page] of manual.pages) {
    const query = plain(make(page))
    if (query.replace(/[^\p{L}]/gu, "").length < 3) continue
    const original = englishManual.pages.get(path)
    if (original !== undefined && plain(make(original)) === query) continue
    byQuery.set(query, [...(byQuery.get(query) ?? []), page.url])
  }
  return [...byQuery].filter(([, urls]) => urls.length === 1).map(([query, urls]) => ({ query, url: urls[0]! }))
}

const build = (docs: Iterable<IndexDocument>, options?: EngineOptions) => {
  const builder = new IndexBuilder(options)
  builder.add(docs)
  return builder.build()
}

/** Mean reciprocal rank of the known items, ranks cut at 100. */
const mrr = (index: SearchIndex, items: ReadonlyArray<KnownItem>, language?: string) => {
  let sum = 0
  for (const item of items) {
    const ranked = index.rank(item.query, 100, { collapse: false, ...(language === undefined ? {} : { language }) })
    const at = ranked.findIndex((r) => r.url === item.url)
    if (at >= 0) sum += 1 / (at + 1)
  }
  return items.length === 0 ? 0 : sum / items.length
}

const declared = (manual: Manual, lang: string | undefined) =>
  [...manual.pages.values()].map((page) => (lang === undefined ? page : { ...page, lang }))

console.log(`Languages bench: GIMP's manual (gimp-help-*), ${translated.map((m) => `${m.language} ${m.pages.size}`).join(", ")} pages, en ${englishManual.pages.size}`)
console.log(`Node ${process.version}, ${availableParallelism()} cores, load average ${loadavg().map((n) => n.toFixed(2)).join(" ")}\n`)

const format = (x: number) => x.toFixed(4)
const kinds = [["titles", (p: IndexDocument) => titleQuery(p.title)], ["sentences", sentenceQuery]] as const

// What detection made of each manual's pages.
const detection: Array<Array<string>> = []
const alone: Array<Array<string>> = []
const costs: Array<Array<string>> = []
const timed = <A>(f: () => A): [A, number] => {
  const started = performance.now()
  return [f(), performance.now() - started]
}
const megabytes = (index: SearchIndex) => (encodeSnapshot(index).byteLength / 1e6).toFixed(2)
const indexes = translated.map((manual) => {
  // Five builds each, alternating, after one of each to warm the code up: the median is timed.
  const englishTimes: Array<number> = []
  const declaredTimes: Array<number> = []
  let asEnglish = build(declared(manual, "en"))
  let asDeclared = build(declared(manual, manual.language))
  for (let round = 0; round < 5; round++) {
    let ms: number
    ;[asEnglish, ms] = timed(() => build(declared(manual, "en")))
    englishTimes.push(ms)
    ;[asDeclared, ms] = timed(() => build(declared(manual, manual.language)))
    declaredTimes.push(ms)
  }
  const englishMs = median(englishTimes)
  const declaredMs = median(declaredTimes)
  // A search (10 hits with snippets) for each known-item query, in alternating rounds: the median round's µs a search.
  const queries = kinds.flatMap(([, make]) => knownItems(manual, make).map((item) => item.query))
  const searchTimes = { english: [] as Array<number>, declared: [] as Array<number> }
  for (let round = 0; round < 4; round++) {
    for (const [index, times] of [[asEnglish, searchTimes.english], [asDeclared, searchTimes.declared]] as const) {
      const [, ms] = timed(() => { for (const query of queries) index.search(query, 10) })
      if (round > 0) times.push(1000 * ms / queries.length)
    }
  }
  const englishUs = median(searchTimes.english)
  const declaredUs = median(searchTimes.declared)
  costs.push([
    manual.language, englishMs.toFixed(0), declaredMs.toFixed(0), `${(declaredMs / englishMs).toFixed(2)}x`, megabytes(asEnglish), megabytes(asDeclared),
    englishUs.toFixed(0), declaredUs.toFixed(0), `${(declaredUs / englishUs).toFixed(2)}x`
  ])
  const unstemmed = build(declared(manual, manual.language), { stemming: false })
  const detected = build(declared(manual, undefined))
  const table = detected.parts.pageLanguages!
  const counts = new Map<string, number>()
  for (const id of table.ids) counts.set(table.table[id]!.language, (counts.get(table.table[id]!.language) ?? 0) + 1)
  const share = (language: string) => `${(100 * (counts.get(language) ?? 0) / table.ids.length).toFixed(1)}%`
  const others = [...counts].filter(([l]) => l !== manual.language && l !== "en" && l !== "").reduce((n, [, c]) => n + c, 0)
  detection.push([manual.language, String(table.ids.length), share(manual.language), share("en"), share(""), `${(100 * others / table.ids.length).toFixed(1)}%`])
  for (const [kind, make] of kinds) {
    const items = knownItems(manual, make)
    alone.push([
      `${manual.language} ${kind}`, String(items.length), format(mrr(asEnglish, items)), format(mrr(asDeclared, items)),
      format(mrr(detected, items)), format(mrr(detected, items, manual.language)), format(mrr(unstemmed, items))
    ])
  }
  return { manual }
})

console.log("What detection made of each manual's pages (the untranslated parts are in English):\n")
console.log(alignedTable(["manual", "pages", "its language", "en", "none", "other"], detection, { rule: true }))
console.log("\nWhat each manual's own analysis (stems and exact forms) costs its build (median of 5), snapshot and searches (its known-item queries, median of 3 rounds), against English analysis:\n")
console.log(alignedTable(["manual", "English ms", "declared ms", "ratio", "English MB", "declared MB", "English µs a search", "declared µs", "ratio"], costs, { rule: true }))
console.log("\nMRR of known-item queries, one index per manual:\n")
console.log(alignedTable(["language, queries", "queries", "English analysis", "declared", "detected", "asked (language)", "declared, unstemmed"], alone, { rule: true }))

// All the manuals in one index, the English one with them.
const everything = [englishManual, ...translated]
const mixedEnglish = build(everything.flatMap((m) => declared(m, "en")))
const mixedDetected = build(everything.flatMap((m) => declared(m, undefined)))
const mixed: Array<Array<string>> = []
for (const { manual } of indexes) {
  for (const [kind, make] of kinds) {
    const items = knownItems(manual, make)
    mixed.push([`${manual.language} ${kind}`, String(items.length), format(mrr(mixedEnglish, items)), format(mrr(mixedDetected, items)), format(mrr(mixedDetected, items, manual.language))])
  }
}
console.log(`\nMRR of the same queries on one index of all six manuals (${mixedDetected.documentCount} pages):\n`)
console.log(alignedTable(["language, queries", "queries", "English analysis", "detected", "asked (language)"], mixed, { rule: true }))

// What detection costs a build: the same passages declaring English, or declaring nothing.
const corpus = ensurePassageCorpus()
if (corpus._tag === "Missing") {
  if (process.env.CI === "true") throw new Error(`languages bench: passage corpus missing under CI=true: ${corpus.reason}`)
  console.log(`\n[skip] build cost of detection: the search bench's passages are unavailable (${corpus.reason})`)
} else {
  const passages = readJsonlLines<IndexDocument>(corpus.path)
  const timeBuild = (docs: ReadonlyArray<IndexDocument>) => {
    const started = performance.now()
    const builder = new IndexBuilder()
    for (let i = 0; i < docs.length; i += 5000) builder.add(docs.slice(i, i + 5000))
    builder.build()
    return (performance.now() - started) / 1000
  }
  const asEnglish = passages.map((p) => ({ ...p, lang: "en" }))
  const times = { declared: [] as Array<number>, detected: [] as Array<number> }
  for (let round = 0; round < 3; round++) {
    times.declared.push(timeBuild(asEnglish))
    times.detected.push(timeBuild(passages))
  }
  const started = performance.now()
  for (const p of passages) detectPageLanguage(pageLanguageSample(p.title, p.text))
  const perPage = (performance.now() - started) * 1000 / passages.length
  const declaredS = median(times.declared)
  const detectedS = median(times.detected)
  console.log(`\nWhat detection costs a build of ${passages.length} passages (median of 3 alternating rounds):\n`)
  console.log(alignedTable(["pages", "build s", "rounds"], [
    ["declaring English", declaredS.toFixed(2), times.declared.map((t) => t.toFixed(2)).join(", ")],
    ["declaring nothing (detected)", detectedS.toFixed(2), times.detected.map((t) => t.toFixed(2)).join(", ")]
  ], { rule: true }))
  console.log(`\ndetected / declared ${(detectedS / declaredS).toFixed(2)}x; detection alone ${perPage.toFixed(1)} µs a page (eld on the first ${pageSampleChars} characters)`)

  // What a shorter or longer sample would give: eld's time a page, and how often it names the
  // language a reading of 1,000 characters names (eld itself reads about 350 bytes at most).
  const sets: Array<[string, ReadonlyArray<IndexDocument>]> = [
    ...everything.map((m): [string, ReadonlyArray<IndexDocument>] => [`gimp-help-${m.language}`, [...m.pages.values()]]),
    ["passages (first 8,000)", passages.slice(0, 8_000)]
  ]
  const lengths = [96, 128, pageSampleChars, 400]
  const rows = sets.map(([name, docs]) => {
    const reference = docs.map((d) => detectPageLanguage(pageLanguageSample(d.title, d.text, 1_000)) ?? "")
    return [name, ...lengths.map((n) => {
      const samples = docs.map((d) => pageLanguageSample(d.title, d.text, n))
      const started = performance.now()
      const found = samples.map((sample) => detectPageLanguage(sample) ?? "")
      const micros = (performance.now() - started) * 1000 / docs.length
      const agree = found.filter((language, i) => language === reference[i]).length / docs.length
      return `${micros.toFixed(0)} µs, ${(100 * agree).toFixed(1)}%`
    })]
  })
  console.log(`\nDetection by sample length: µs a page, and the share of pages given the language a 1,000-character reading gives:\n`)
  console.log(alignedTable(["pages", ...lengths.map((n) => `${n} characters`)], rows, { rule: true }))
}
