/**
 * Web and image search over the local engine and the configured upstream providers:
 * every selected source is asked at once, each under its own timeout and all under one
 * deadline; the answers are fused by weighted RRF (Fusion); sources that fail are left
 * out and reported, and only when none answers does the request fail.
 *
 * A provider that answers 429, 403 or a CAPTCHA page is suspended (its Retry-After
 * honoured, else SearXNG's waits: 403 180 s, CAPTCHA 1 h, 429 doubling from 60 s) and
 * then probed by one request while the others keep skipping it. Time comes from Effect's
 * Clock, so TestClock drives suspensions in tests.
 *
 * Domain filters (includeDomains, excludeDomains) go to each source in its own terms and
 * are checked on every source's answer (DomainFilter). Results that carry their page
 * (`content`) are read after the answer, within what is left of the deadline
 * (ResultContent).
 *
 * Answers go through ResultCache (single-flight, TTL per freshness). Interrupting a
 * request (the client went away) interrupts every upstream call once no other request
 * waits for the same answer. A request that selects the local engine alone is answered
 * by it directly, uncached, exactly as before federation existed.
 */
import { Cause, Clock, Context, Effect, Exit, Layer, Option, Schema } from "effect"
import { ResultCache } from "../store/ResultCache.ts"
import { collectNotes } from "./RetrievalNotes.ts"
import { type DomainFilter, domainFilterOf, passesDomainFilter, withSiteWords } from "./DomainFilter.ts"
import { type Fused, fuseImages, fuseWeb, type RankedList } from "./Fusion.ts"
import { ImageSearch } from "./ImageSearch.ts"
import type { ExplainExtra, Provenance, ResultReport, SearchExtra, SourceReport, UnappliedReport } from "./Provenance.ts"
import type { CorrectedWebData, QueryCorrections } from "./QueryCorrections.ts"
import { freshnessBounds, withinBounds } from "./PublishedDate.ts"
import { contentModeOf, type ContentReaders, withContent } from "./ResultContent.ts"
import { SearchBackendError } from "./SearchError.ts"
import { optionsKey, PROVIDER_OPTIONS, type SearchQuery } from "./SearchQuery.ts"
import { type ProviderAnswer, ProviderError, type SearchProvider, type UnappliedOption } from "./SearchProvider.ts"
import type { ImageResult, WebHit, WebSearchData } from "./SearchResult.ts"
import { StoredPages } from "./StoredPages.ts"
import { WebFetch } from "./WebFetch.ts"
import { WebSearch } from "./WebSearch.ts"

/** The name `sources` uses for the local engine. */
export const LOCAL_SOURCE = "local"

/** A provider with its place in the fusion. */
export interface ConfiguredProvider {
  readonly provider: SearchProvider
  /** RRF weight (1 = as much as the local engine by default). */
  readonly weight: number
  readonly timeoutMs: number
}

export interface FederationSettings {
  /** The whole request: no source is waited for longer. */
  readonly deadlineMs: number
  readonly local: { readonly weight: number; readonly timeoutMs: number }
  /** How long answers are kept, by the request's freshness ("none": no freshness given). */
  readonly cacheTtlMs: {
    readonly none: number
    readonly day: number
    readonly week: number
    readonly month: number
    readonly year: number
    readonly range: number
  }
  /** An answer some source failed to contribute to is kept at most this long. */
  readonly partialTtlMs: number
  readonly suspension: {
    readonly blockedMs: number
    readonly captchaMs: number
    readonly rateLimitedMs: number
    readonly maxMs: number
  }
}

export const defaultFederationSettings: FederationSettings = {
  deadlineMs: 5_000,
  local: { weight: 1, timeoutMs: 5_000 },
  cacheTtlMs: { none: 600_000, day: 300_000, week: 1_800_000, month: 3_600_000, year: 3_600_000, range: 3_600_000 },
  partialTtlMs: 30_000,
  suspension: { blockedMs: 180_000, captchaMs: 3_600_000, rateLimitedMs: 60_000, maxMs: 3_600_000 }
}

/** `sources` named something that is not configured, or nothing able to answer. Rendered as 400. */
export class SourceSelectionError extends Schema.TaggedError<SourceSelectionError>()("SourceSelectionError", {
  /** The offending field, e.g. `sources[2]`. */
  path: Schema.String,
  message: Schema.String
}) {}

/** An answer and what goes in the envelope's `extra`. */
export interface FederatedAnswer<A> {
  readonly data: A
  readonly extra: SearchExtra
}

export class FederatedSearch extends Context.Service<FederatedSearch, {
  web(query: SearchQuery): Effect.Effect<FederatedAnswer<WebSearchData>, SearchBackendError | SourceSelectionError>
  images(query: SearchQuery): Effect.Effect<FederatedAnswer<ReadonlyArray<ImageResult>>, SearchBackendError | SourceSelectionError>
  /** The names `sources` accepts: local first, then the providers in config order. */
  readonly sourceNames: ReadonlyArray<string>
}>()("periscope/search/FederatedSearch") {
  /**
   * Over the WebSearch and ImageSearch in context (the local engine), the providers and a
   * ResultCache; results carry content read from StoredPages and WebFetch when those are there.
   */
  static readonly layer = (
    providers: ReadonlyArray<ConfiguredProvider>,
    settings: FederationSettings = defaultFederationSettings
  ): Layer.Layer<FederatedSearch, never, WebSearch | ImageSearch | ResultCache> =>
    Layer.effect(FederatedSearch, make(providers, settings))
}

// ---------------------------------------------------------------------------------------------

/** No bound on the `site:` words the local engine reads (its query is cut far beyond the wire's keywords). */
const LOCAL_QUERY_LIMITS = { maxChars: Number.MAX_SAFE_INTEGER }

/** The query as the local engine reads it: the domain filter as `site:` words. */
const localQuery = (query: SearchQuery): SearchQuery => {
  const filter = domainFilterOf(query)
  return filter === undefined ? query : { ...query, keywords: withSiteWords(query.keywords, filter, LOCAL_QUERY_LIMITS).keywords }
}

/** The local engine as a source: it applies domains (site: words) and language, no other option; freshness is filtered by date. */
const localProvider = (web: WebSearch["Service"], images: ImageSearch["Service"]): SearchProvider => {
  const unapplied = (query: SearchQuery): Array<UnappliedOption> => {
    const out: Array<UnappliedOption> = []
    for (const option of PROVIDER_OPTIONS) {
      if (query[option] === undefined || option === "includeDomains" || option === "excludeDomains" || option === "language") continue
      out.push(option === "freshness"
        ? { option, handling: "filtered", detail: "filtered our side by publish date; undated pages left out" }
        : { option, handling: "ignored", detail: "the local index has no such filter" })
    }
    return out
  }
  const failure = (error: SearchBackendError) =>
    new ProviderError({ provider: LOCAL_SOURCE, reason: error.reason === "timeout" ? "timeout" : "unavailable", message: error.message })
  return {
    name: LOCAL_SOURCE,
    kind: "local",
    images: true,
    web: (query) =>
      collectNotes(web.search(localQuery(query))).pipe(
        Effect.map(([data, notes]): ProviderAnswer<WebHit> => {
          const corrections = correctionsOf(data)
          return { hits: data.organic, unapplied: unapplied(query), notes, ...(corrections === undefined ? {} : { corrections }) }
        }),
        Effect.mapError(failure)
      ),
    image: (query) =>
      images.search(localQuery(query)).pipe(
        Effect.map((hits): ProviderAnswer<ImageResult> => ({ hits, unapplied: unapplied(query) })),
        Effect.mapError(failure)
      )
  }
}

interface Source {
  readonly provider: SearchProvider
  readonly weight: number
  readonly timeoutMs: number
}

interface Suspension {
  until: number
  strikes: number
  reason: ProviderError["reason"]
  message: string
  probing: boolean
}

/** One source's part of an answer. */
interface Outcome<H> {
  readonly report: SourceReport
  readonly list: RankedList<H> | undefined
  readonly unapplied: ReadonlyArray<UnappliedReport>
  readonly corrections?: QueryCorrections | undefined
}

interface Computed<A> {
  readonly data: A
  readonly provenance: Provenance
  readonly partial: boolean
}

const round2 = (ms: number) => Math.round(ms * 100) / 100
const elapsedMs = (start: bigint, end: bigint) => round2(Number(end - start) / 1e6)

const make = (providers: ReadonlyArray<ConfiguredProvider>, settings: FederationSettings) =>
  Effect.gen(function*() {
    const web = yield* WebSearch
    const images = yield* ImageSearch
    const cache = yield* ResultCache
    const readers: ContentReaders = {
      stored: Option.getOrUndefined(yield* Effect.serviceOption(StoredPages)),
      fetcher: Option.getOrUndefined(yield* Effect.serviceOption(WebFetch))
    }
    const local = localProvider(web, images)
    const sources: Array<Source> = [
      { provider: local, weight: settings.local.weight, timeoutMs: settings.local.timeoutMs },
      ...providers.map((p) => ({ provider: p.provider, weight: p.weight, timeoutMs: p.timeoutMs }))
    ]
    const byName = new Map(sources.map((s) => [s.provider.name, s]))
    const sourceNames = sources.map((s) => s.provider.name)
    const suspensions = new Map<string, Suspension>()

    const select = (query: SearchQuery, kind: "web" | "images"): Effect.Effect<Array<Source>, SourceSelectionError> => {
      if (query.sources === undefined) return Effect.succeed(kind === "web" ? sources : sources.filter((s) => s.provider.images))
      const chosen: Array<Source> = []
      for (let i = 0; i < query.sources.length; i++) {
        const source = byName.get(query.sources[i]!)
        if (source === undefined) {
          return Effect.fail(new SourceSelectionError({
            path: `sources[${i}]`,
            message: `sources[${i}]: names no configured source, got ${JSON.stringify(query.sources[i])}; configured: ${sourceNames.join(", ")}`
          }))
        }
        if (!chosen.includes(source)) chosen.push(source)
      }
      if (kind === "images" && !chosen.some((s) => s.provider.images)) {
        return Effect.fail(new SourceSelectionError({ path: "sources", message: "sources: none of the sources named has an image search" }))
      }
      return Effect.succeed(chosen)
    }

    /** Suspends a source after 429/403/CAPTCHA: Retry-After when sent, else the configured wait (429 doubling). */
    const suspend = (name: string, error: ProviderError, now: number) => {
      const previous = suspensions.get(name)
      const strikes = (previous?.strikes ?? 0) + 1
      const s = settings.suspension
      const wait = error.retryAfterMs !== undefined
        ? error.retryAfterMs
        : error.reason === "blocked"
        ? (error.captcha === true ? s.captchaMs : s.blockedMs)
        : s.rateLimitedMs * 2 ** (strikes - 1)
      suspensions.set(name, { until: now + Math.min(s.maxMs, Math.max(0, wait)), strikes, reason: error.reason, message: error.message, probing: false })
    }

    /** `start`: when the request began; a source's `ms` is how long the request waited for it. */
    const ask = <H>(
      source: Source,
      query: SearchQuery,
      call: (provider: SearchProvider, query: SearchQuery) => Effect.Effect<ProviderAnswer<H>, ProviderError>,
      start: bigint
    ): Effect.Effect<Outcome<H>> =>
      Effect.gen(function*() {
        const { provider } = source
        const base = { name: provider.name, kind: provider.kind }
        const now = yield* Clock.currentTimeMillis
        const suspension = suspensions.get(provider.name)
        if (suspension !== undefined && (now < suspension.until || suspension.probing)) {
          const report: SourceReport = {
            ...base,
            status: "suspended",
            ms: 0,
            results: 0,
            error: { reason: suspension.reason, message: suspension.message },
            suspendedUntil: new Date(suspension.until).toISOString()
          }
          return { report, list: undefined, unapplied: [] }
        }
        // Past its time, a suspended source gets one probe; the other requests skip it meanwhile.
        if (suspension !== undefined) suspension.probing = true
        const timeoutMs = Math.min(source.timeoutMs, settings.deadlineMs)
        const exit = yield* call(provider, query).pipe(
          Effect.timeoutOrElse({
            duration: timeoutMs,
            orElse: () => Effect.fail(new ProviderError({ provider: provider.name, reason: "timeout", message: `no answer within ${timeoutMs} ms` }))
          }),
          Effect.onInterrupt(() => Effect.sync(() => { if (suspension !== undefined) suspension.probing = false })),
          Effect.exit
        )
        const ms = elapsedMs(start, yield* Clock.currentTimeNanos)
        if (Exit.isSuccess(exit)) {
          suspensions.delete(provider.name)
          const answer = exit.value
          const unapplied = answer.unapplied.map((u) => ({ source: provider.name, ...u }))
          const hits = filterByDomains(filterByFreshness(answer, query, now), domainFilterOf(query))
          return {
            report: { ...base, status: "ok", ms, results: hits.length, ...(answer.notes !== undefined && answer.notes.length > 0 ? { notes: answer.notes } : {}) },
            list: { source: provider.name, weight: source.weight, hits },
            unapplied,
            corrections: answer.corrections
          }
        }
        const error = exitError(exit, provider.name)
        if (error.reason === "rate_limited" || error.reason === "blocked") suspend(provider.name, error, yield* Clock.currentTimeMillis)
        else if (suspension !== undefined) suspension.probing = false
        if (error.reason === "unsupported") {
          return { report: { ...base, status: "unsupported", ms, results: 0 }, list: undefined, unapplied: [] }
        }
        const report: SourceReport = {
          ...base,
          status: "failed",
          ms,
          results: 0,
          error: error.retryAfterMs === undefined
            ? { reason: error.reason, message: error.message }
            : { reason: error.reason, message: error.message, retryAfterMs: error.retryAfterMs }
        }
        return { report, list: undefined, unapplied: [] }
      })

    /**
     * All selected sources at once; the deadline bounds every one of them. The local engine
     * answers synchronously on this thread, so it starts last: the upstream requests are on
     * the wire while it ranks. Outcomes keep the selection's order.
     */
    const gather = <H>(
      chosen: ReadonlyArray<Source>,
      query: SearchQuery,
      call: (provider: SearchProvider, query: SearchQuery) => Effect.Effect<ProviderAnswer<H>, ProviderError>
    ) =>
      Effect.flatMap(Clock.currentTimeNanos, (start) => {
        const order = chosen.map((_, i) => i).sort((a, b) => Number(chosen[a]!.provider === local) - Number(chosen[b]!.provider === local))
        return Effect.map(
          Effect.forEach(order, (i) => ask(chosen[i]!, query, call, start), { concurrency: "unbounded" }),
          (outcomes) => {
            const inOrder: Array<Outcome<H>> = new Array(outcomes.length)
            for (let k = 0; k < order.length; k++) inOrder[order[k]!] = outcomes[k]!
            return inOrder
          }
        )
      })

    const failAll = (outcomes: ReadonlyArray<Outcome<unknown>>) =>
      new SearchBackendError({
        reason: "upstream",
        message: `every search source failed: ${
          outcomes.map(({ report }) =>
            `${report.name}: ${report.status === "ok" ? "no answer" : report.error?.reason ?? report.status}${report.error ? ` (${report.error.message})` : ""}`
          ).join("; ")
        }`
      })

    const provenanceOf = <H>(outcomes: ReadonlyArray<Outcome<H>>, fused: ReadonlyArray<Fused<H>>): Provenance => {
      const corrections = outcomes.find((o) => o.corrections !== undefined)?.corrections
      return {
        sources: outcomes.map((o) => o.report),
        results: fused.map((f, i): ResultReport => ({ position: i + 1, score: Math.round(f.score * 1e6) / 1e6, sources: f.sources })),
        unapplied: outcomes.flatMap((o) => o.unapplied),
        ...(corrections === undefined ? {} : { corrections })
      }
    }

    const compute = <H, A>(
      chosen: ReadonlyArray<Source>,
      query: SearchQuery,
      call: (provider: SearchProvider, query: SearchQuery) => Effect.Effect<ProviderAnswer<H>, ProviderError>,
      fuse: (lists: ReadonlyArray<RankedList<H>>, limit: number) => Array<Fused<H>>,
      toData: (fused: ReadonlyArray<Fused<H>>, outcomes: ReadonlyArray<Outcome<H>>) => A
    ): Effect.Effect<Computed<A>, SearchBackendError> =>
      Effect.gen(function*() {
        const outcomes = yield* gather(chosen, query, call)
        const lists: Array<RankedList<H>> = []
        for (const o of outcomes) if (o.list !== undefined) lists.push(o.list)
        if (lists.length === 0) return yield* Effect.fail(failAll(outcomes))
        const fused = fuse(lists, query.num)
        return {
          data: toData(fused, outcomes),
          provenance: provenanceOf(outcomes, fused),
          partial: outcomes.some((o) => o.report.status === "failed" || o.report.status === "suspended")
        }
      })

    const ttlOf = (query: SearchQuery) => (exit: Exit.Exit<Computed<unknown>, unknown>): number => {
      if (!Exit.isSuccess(exit)) return 0
      const f = query.freshness
      const ttl = settings.cacheTtlMs[f === undefined ? "none" : typeof f === "string" ? f : "range"]
      return exit.value.partial ? Math.min(ttl, settings.partialTtlMs) : ttl
    }

    const extraOf = (query: SearchQuery, provenance: Provenance, cacheState: ExplainExtra["cache"], ms: number): SearchExtra => {
      if (query.explain === true) return { cache: cacheState, ms, ...provenance }
      const searched = provenance.corrections?.searched === true ? provenance.corrections : undefined
      if (searched === undefined) return provenance.unapplied.length > 0 ? { unapplied: provenance.unapplied } : null
      return provenance.unapplied.length > 0 ? { unapplied: provenance.unapplied, corrections: searched } : { corrections: searched }
    }

    /** The answer as computed or cached, how the cache served it, and when the request began. */
    const run = <H, A>(
      kind: "web" | "images",
      query: SearchQuery,
      call: (provider: SearchProvider, query: SearchQuery) => Effect.Effect<ProviderAnswer<H>, ProviderError>,
      fuse: (lists: ReadonlyArray<RankedList<H>>, limit: number) => Array<Fused<H>>,
      toData: (fused: ReadonlyArray<Fused<H>>, outcomes: ReadonlyArray<Outcome<H>>) => A
    ): Effect.Effect<{ readonly computed: Computed<A>; readonly cacheState: ExplainExtra["cache"]; readonly start: bigint }, SearchBackendError | SourceSelectionError> =>
      Effect.gen(function*() {
        const start = yield* Clock.currentTimeNanos
        const chosen = yield* select(query, kind)
        const work = compute(chosen, query, call, fuse, toData)
        if (chosen.length === 1 && chosen[0]!.provider === local) return { computed: yield* work, cacheState: "none" as const, start }
        const key = `${kind}\u0000${query.keywords}\u0000${query.num}\u0000${optionsKey(query)}\u0000${chosen.map((s) => s.provider.name).join(",")}`
        const { outcome, value } = yield* cache.get(key, work, ttlOf(query))
        return { computed: value, cacheState: outcome, start }
      })

    const answered = <A>(query: SearchQuery) => ({ computed, cacheState, start }: { readonly computed: Computed<A>; readonly cacheState: ExplainExtra["cache"]; readonly start: bigint }) =>
      Effect.map(Clock.currentTimeNanos, (now): FederatedAnswer<A> => ({ data: computed.data, extra: extraOf(query, computed.provenance, cacheState, elapsedMs(start, now)) }))

    const webData = (keywords: string) => (fused: ReadonlyArray<Fused<WebHit>>): WebSearchData => ({
      organic: fused.map((f, i) => ({ title: f.hit.title, link: f.hit.link, snippet: f.hit.snippet, position: i + 1, date: f.hit.date })),
      query: keywords
    })

    const webCall = (provider: SearchProvider, query: SearchQuery) => provider.web(freshnessOverfetch(query, provider))
    const imageCall = (provider: SearchProvider, query: SearchQuery) => provider.image(query)

    /** The results with their content read (what the request asked), within what is left of the deadline. */
    const withPages = (
      query: SearchQuery,
      data: WebSearchData,
      listedLive: (index: number) => boolean,
      start: bigint,
      extraAt: (ms: number) => SearchExtra
    ): Effect.Effect<FederatedAnswer<WebSearchData>> =>
      Effect.gen(function*() {
        const left = settings.deadlineMs - elapsedMs(start, yield* Clock.currentTimeNanos)
        const read = yield* withContent(readers, data.organic, listedLive, query, left)
        const extra = extraAt(elapsedMs(start, yield* Clock.currentTimeNanos))
        return {
          data: { ...data, organic: read.organic },
          extra: read.unread.length === 0 ? extra : { ...extra, unread: read.unread }
        }
      })

    const notLive = () => false

    const webSearch = (query: SearchQuery): Effect.Effect<FederatedAnswer<WebSearchData>, SearchBackendError | SourceSelectionError> => {
      const federated = query.sources !== undefined || query.freshness !== undefined || sources.length > 1 || query.explain === true ||
        query.language !== undefined || query.region !== undefined || query.safeSearch !== undefined ||
        query.includeDomains !== undefined || query.excludeDomains !== undefined
      const content = contentModeOf(query) !== undefined
      if (!federated) {
        // The local engine alone without options: its answer exactly as before federation, and
        // what it corrected when it searched a corrected query.
        if (!content) return Effect.map(web.search(query), localAnswer)
        return Effect.flatMap(Clock.currentTimeNanos, (start) =>
          Effect.flatMap(web.search(query), (found) => {
            const { data, extra } = localAnswer(found)
            return withPages(query, data, notLive, start, () => extra)
          }))
      }
      const ran = run("web", query, webCall, fuseWeb, webData(query.keywords))
      if (!content) return Effect.flatMap(ran, answered<WebSearchData>(query))
      return Effect.flatMap(ran, ({ computed, cacheState, start }) => {
        const results = computed.provenance.results
        const listedLive = (i: number) => results[i]?.sources.some((s) => s.source !== LOCAL_SOURCE) ?? false
        return withPages(query, computed.data, listedLive, start, (ms) => extraOf(query, computed.provenance, cacheState, ms))
      })
    }

    const imageSearch = (query: SearchQuery) => {
      if (sources.length === 1 && query.sources === undefined && query.explain !== true && query.freshness === undefined &&
        query.language === undefined && query.region === undefined && query.safeSearch === undefined &&
        query.includeDomains === undefined && query.excludeDomains === undefined) {
        return Effect.map(images.search(query), (data): FederatedAnswer<ReadonlyArray<ImageResult>> => ({ data, extra: null }))
      }
      return Effect.flatMap(run("images", query, imageCall, fuseImages, (fused) => fused.map((f) => f.hit)), answered<ReadonlyArray<ImageResult>>(query))
    }

    return FederatedSearch.of({ web: webSearch, images: imageSearch, sourceNames })
  })

/** The corrections a backend answered with, if any. */
const correctionsOf = (data: WebSearchData | CorrectedWebData): QueryCorrections | undefined =>
  "corrections" in data ? data.corrections : undefined

/**
 * The local engine's answer on its own: its data as it is, and in `extra` the correction whose
 * query it searched (a suggestion alone shows only when the request asks for explain).
 */
const localAnswer = (found: WebSearchData | CorrectedWebData): FederatedAnswer<WebSearchData> => {
  const corrections = correctionsOf(found)
  if (corrections === undefined) return { data: found, extra: null }
  const data: WebSearchData = { organic: found.organic, query: found.query }
  return { data, extra: corrections.searched ? { corrections } : null }
}

/** With freshness filtered our side, the local engine is asked for more so the filter leaves enough. */
const freshnessOverfetch = (query: SearchQuery, provider: SearchProvider): SearchQuery =>
  query.freshness !== undefined && provider.kind === "local" ? { ...query, num: Math.min(100, query.num * 3) } : query

/** Drops dated-outside and undated hits when the source said it could not apply freshness itself. */
const filterByFreshness = <H>(answer: ProviderAnswer<H>, query: SearchQuery, nowMs: number): ReadonlyArray<H> => {
  if (query.freshness === undefined || !answer.unapplied.some((u) => u.option === "freshness" && u.handling === "filtered")) {
    return answer.hits
  }
  const bounds = freshnessBounds(query.freshness, nowMs)
  return answer.hits.filter((hit) => {
    const date = (hit as { readonly date?: string | null }).date
    // Images carry no date: nothing to filter them by.
    if (date === undefined) return true
    return withinBounds(date, bounds) === true
  })
}

/** Drops hits whose page is outside the domain filter (web results by link, images by the page they are on). */
const filterByDomains = <H>(hits: ReadonlyArray<H>, filter: DomainFilter | undefined): ReadonlyArray<H> => {
  if (filter === undefined) return hits
  return hits.filter((hit) => {
    const page = hit as { readonly link?: string; readonly refUrl?: string }
    return passesDomainFilter(page.link ?? page.refUrl ?? "", filter)
  })
}

const exitError = (exit: Exit.Exit<unknown, ProviderError>, provider: string): ProviderError => {
  if (Exit.isFailure(exit)) {
    const error = Cause.findErrorOption(exit.cause)
    if (error._tag === "Some") return error.value
  }
  return new ProviderError({ provider, reason: "unavailable", message: "the provider failed unexpectedly" })
}
