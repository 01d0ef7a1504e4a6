/**
 * The `fetch` section of the config file: how webFetch reads pages. Private,
 * loopback and link-local addresses are refused unless allowed here (all of them,
 * or listed hosts); limits bound every fetch; the page cache keeps answers for a while;
 * pages that build themselves with scripts are rendered in a headless Chromium; bounds on
 * a page's structure (nesting, elements, PDF streams and pages) refuse pages that would cost
 * far more to read than their size says; many URLs are read a few per host at a time; a
 * site's map is bounded in URLs and time.
 */
import { Schema } from "effect"
import { type AddedPagesLimits, DEFAULT_ADDED_PAGES_LIMITS } from "../backends/AddedPages.ts"
import { DEFAULT_MAP_MAX_URLS, DEFAULT_MAP_TIMEOUT_MS, DEFAULT_PER_HOST, type FetchSettings } from "../backends/GuardedWebFetch.ts"
import { DEFAULT_PAGE_LIMITS } from "../ingest/PageLimits.ts"
import type { RenderMode } from "../search/WebFetch.ts"
import { ruledNumber, ruledString } from "../schema/Rules.ts"

const optionalKey = Schema.optionalKey
const hostRule = "must be a host name or address, with an optional :port"

export const FetchConfig = Schema.Struct({
  /** Fetch pages on private, loopback and link-local addresses too. Default false. */
  allowPrivateAddresses: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  /** Hosts ("intranet.example", "10.0.0.5:8080", "127.0.0.1") exempt from the address check. */
  allowHosts: optionalKey(
    Schema.Array(ruledString(hostRule).check(Schema.isPattern(/^(?:\[[0-9A-Fa-f:.]+\]|[^\s/:[\]@]+)(?::\d{1,5})?$/, { message: hostRule })))
      .annotate({ message: "must be an array of hosts" })
  ),
  /** The whole fetch, redirects included. Default 15000. */
  timeoutMs: optionalKey(ruledNumber("must be an integer from 1 to 300000", { integer: true, min: 1, max: 300_000 })),
  /** Of the decoded body. Default 10485760 (10 MiB). */
  maxBytes: optionalKey(ruledNumber("must be an integer from 1024 to 1073741824", { integer: true, min: 1024, max: 1_073_741_824 })),
  /** Seconds a fetched page is served from the cache. Default 3600; 0 turns the cache off. */
  cacheTtlSeconds: optionalKey(ruledNumber("must be an integer from 0 to 604800 (seconds)", { integer: true, min: 0, max: 604_800 })),
  /** Pages kept at most (least recently used dropped first). Default 500; 0 turns the cache off. */
  cacheMaxEntries: optionalKey(ruledNumber("must be an integer from 0 to 1000000", { integer: true, min: 0, max: 1_000_000 })),
  /** Add every fetched page to the local index (a request's addToIndex wins). Default false. */
  addToIndex: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  /** Pages one key may add to the index in a minute. Default 30. */
  addToIndexPerMinute: optionalKey(ruledNumber("must be an integer from 1 to 100000", { integer: true, min: 1, max: 100_000 })),
  /** Pages added to the index since its snapshot, at most, until an index run takes them in. Default 1000. */
  addedPagesMax: optionalKey(ruledNumber("must be an integer from 1 to 100000", { integer: true, min: 1, max: 100_000 })),
  /** Their titles and texts together, in bytes. Default 16777216 (16 MiB). */
  addedBytesMax: optionalKey(ruledNumber("must be an integer from 65536 to 1073741824", { integer: true, min: 65_536, max: 1_073_741_824 })),
  /** The User-Agent header sent. */
  userAgent: optionalKey(ruledString("must be a non-empty string of at most 256 characters").check(
    Schema.isMinLength(1, { message: "must be a non-empty string of at most 256 characters" }),
    Schema.isMaxLength(256, { message: "must be a non-empty string of at most 256 characters" })
  )),
  /** Render pages in a headless browser: never, auto (app shells only) or always (a request's render wins). Default auto. */
  render: optionalKey(Schema.Literals(["never", "auto", "always"]).annotate({ message: "must be never, auto or always" })),
  /** Pages the browser renders at once; more wait their turn. Default 2. */
  renderPages: optionalKey(ruledNumber("must be an integer from 1 to 32", { integer: true, min: 1, max: 32 })),
  /** The Chromium executable rendering runs. Default /usr/bin/chromium (Debian's chromium package). */
  chromiumPath: optionalKey(ruledString("must be an absolute path").check(Schema.isPattern(/^\//, { message: "must be an absolute path" }))),
  /** Deepest element nesting of an HTML page read; a deeper page is refused (413). Default 512. */
  maxHtmlDepth: optionalKey(ruledNumber("must be an integer from 16 to 100000", { integer: true, min: 16, max: 100_000 })),
  /** Elements of an HTML page read; a page with more is refused (413). Default 100000. */
  maxHtmlElements: optionalKey(ruledNumber("must be an integer from 1000 to 10000000", { integer: true, min: 1000, max: 10_000_000 })),
  /** Bytes a PDF's compressed streams may inflate to, together; beyond, refused (413). Default 67108864 (64 MiB). */
  maxPdfDecodedBytes: optionalKey(ruledNumber("must be an integer from 1048576 to 4294967296", { integer: true, min: 1_048_576, max: 4_294_967_296 })),
  /** Pages of a PDF read; a longer one is refused (413). Default 1000. */
  maxPdfPages: optionalKey(ruledNumber("must be an integer from 1 to 1000000", { integer: true, min: 1, max: 1_000_000 })),
  /** Pages of one host a request of many URLs reads at once; the others wait their turn. Default 4. */
  perHostConcurrency: optionalKey(ruledNumber("must be an integer from 1 to 20", { integer: true, min: 1, max: 20 })),
  /** URLs a site's map gives at most (a request's limit stays within it). Default 5000. */
  mapMaxUrls: optionalKey(ruledNumber("must be an integer from 1 to 100000", { integer: true, min: 1, max: 100_000 })),
  /** A site's map, all of it; past it, the URLs found so far. Default 30000. */
  mapTimeoutMs: optionalKey(ruledNumber("must be an integer from 1000 to 300000", { integer: true, min: 1000, max: 300_000 }))
}).annotate({
  message: "must be an object {allowPrivateAddresses?, allowHosts?, timeoutMs?, maxBytes?, cacheTtlSeconds?, cacheMaxEntries?, addToIndex?, " +
    "addToIndexPerMinute?, addedPagesMax?, addedBytesMax?, userAgent?, render?, renderPages?, chromiumPath?, maxHtmlDepth?, maxHtmlElements?, maxPdfDecodedBytes?, maxPdfPages?, " +
    "perHostConcurrency?, mapMaxUrls?, mapTimeoutMs?}"
})
export type FetchConfig = typeof FetchConfig.Type

export const DEFAULT_FETCH_USER_AGENT = "Periscope/0.1 (webFetch)"

/** The browser a platform that renders runs (the Node server: adapters/node/browserRenderer.ts). */
export interface BrowserSettings {
  readonly chromiumPath: string
  readonly pages: number
}

export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium"

/** webFetch's render mode when a request names none. */
export const renderModeOf = (config: FetchConfig | undefined): RenderMode => config?.render ?? "auto"

export const browserSettingsOf = (config: FetchConfig | undefined): BrowserSettings => ({
  chromiumPath: config?.chromiumPath ?? DEFAULT_CHROMIUM_PATH,
  pages: config?.renderPages ?? 2
})

/** The bounds of pages added to the index (webFetch's addToIndex): the file's values over the defaults. */
export const addedPagesLimitsOf = (config: FetchConfig | undefined): AddedPagesLimits => ({
  perKeyPerMinute: config?.addToIndexPerMinute ?? DEFAULT_ADDED_PAGES_LIMITS.perKeyPerMinute,
  maxPages: config?.addedPagesMax ?? DEFAULT_ADDED_PAGES_LIMITS.maxPages,
  maxBytes: config?.addedBytesMax ?? DEFAULT_ADDED_PAGES_LIMITS.maxBytes
})

/** The settings webFetch runs with: the file's values over the defaults. */
export const fetchSettingsOf = (config: FetchConfig | undefined): FetchSettings => ({
  allow: config?.allowPrivateAddresses === true ? true : (config?.allowHosts ?? false),
  timeoutMs: config?.timeoutMs ?? 15_000,
  maxBytes: config?.maxBytes ?? 10 * 1024 * 1024,
  cacheTtlMs: (config?.cacheTtlSeconds ?? 3600) * 1000,
  cacheMaxEntries: config?.cacheMaxEntries ?? 500,
  addToIndex: config?.addToIndex ?? false,
  userAgent: config?.userAgent ?? DEFAULT_FETCH_USER_AGENT,
  page: {
    maxHtmlDepth: config?.maxHtmlDepth ?? DEFAULT_PAGE_LIMITS.maxHtmlDepth,
    maxHtmlElements: config?.maxHtmlElements ?? DEFAULT_PAGE_LIMITS.maxHtmlElements,
    maxPdfDecodedBytes: config?.maxPdfDecodedBytes ?? DEFAULT_PAGE_LIMITS.maxPdfDecodedBytes,
    maxPdfPages: config?.maxPdfPages ?? DEFAULT_PAGE_LIMITS.maxPdfPages
  },
  render: renderModeOf(config),
  perHost: config?.perHostConcurrency ?? DEFAULT_PER_HOST,
  mapMaxUrls: config?.mapMaxUrls ?? DEFAULT_MAP_MAX_URLS,
  mapTimeoutMs: config?.mapTimeoutMs ?? DEFAULT_MAP_TIMEOUT_MS
})
