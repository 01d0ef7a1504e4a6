/**
 * The `periscope` command line: `serve` (the server), `index <sources...>`
 * (builds or updates the search snapshot the server serves, by default
 * <PERISCOPE_DATA_DIR>/index.snapshot, with a live progress bar and a summary
 * at the end; `npm run index -- <sources...>` runs the same), `keys
 * create|list|revoke`, `reload` and `mcp` (the MCP server on stdio). The package's bin (bin.ts) loads it once the Node version is
 * known to be new enough.
 */
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Option, Redacted } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { formatOpenSearchSummary, formatSummary, indexOpenSearch, indexSnapshot, silentProgress, terminalProgress } from "./indexCommand.ts"
import { parseOpenSearchTarget } from "../../core/backends/search/OpenSearchConnection.ts"
import { FetchHttpClient } from "effect/http"
import { CRAWL_DEFAULTS } from "../../core/ingest/crawl/Crawl.ts"
import { openSources } from "./sources/openSources.ts"
import { defaultWorkers } from "./extractPool.ts"
import { keysCommand } from "./keysCommand.ts"
import { mcpCommand } from "./mcpCommand.ts"
import { reloadCommand } from "./reloadCommand.ts"
import { serveCommand } from "./serveCommand.ts"
import { loadSettings } from "./settings.ts"

const positiveInt = (name: string, description: string) =>
  Flag.Int(name).pipe(Flag.withDescription(description), Flag.optional)

const index = Command.make(
  "index",
  {
    sources: Argument.String("sources").pipe(
      Argument.withDescription(
        "What to index: folders of .html files (folder=https://published.url/), .warc/.warc.gz, " +
          ".jsonl/.ndjson, a .txt list of URLs, or URLs (a page to crawl from, or a sitemap .xml)"
      ),
      Argument.atLeast(1)
    ),
    out: Flag.String("out").pipe(
      Flag.withDescription("Snapshot file to build or update (default: index.snapshot in PERISCOPE_DATA_DIR, ./.periscope)"),
      Flag.optional
    ),
    fresh: Flag.Boolean("fresh").pipe(
      Flag.withDescription("Replace the snapshot instead of adding to it"),
      Flag.withDefault(false)
    ),
    baseUrl: Flag.String("base-url").pipe(
      Flag.withDescription("URL that folders given without =URL are published at"),
      Flag.optional
    ),
    maxPages: positiveInt("max-pages", `Crawl: most pages to fetch (default ${CRAWL_DEFAULTS.maxPages})`),
    maxDepth: positiveInt("max-depth", `Crawl: most link hops from a start page (default ${CRAWL_DEFAULTS.maxDepth})`),
    concurrency: positiveInt("concurrency", `Crawl: requests at once, over all hosts (default ${CRAWL_DEFAULTS.concurrency})`),
    delayMs: positiveInt("delay-ms", `Crawl: pause between requests to one host (default ${CRAWL_DEFAULTS.delayMs})`),
    timeoutMs: positiveInt("timeout-ms", `Crawl: time limit per page (default ${CRAWL_DEFAULTS.timeoutMs})`),
    maxBytes: positiveInt("max-bytes", `Size limit per page or file, in bytes (default ${CRAWL_DEFAULTS.maxBytes} for pages)`),
    maxRedirects: positiveInt("max-redirects", `Crawl: redirects followed per page (default ${CRAWL_DEFAULTS.maxRedirects})`),
    anySite: Flag.Boolean("any-site").pipe(
      Flag.withDescription("Crawl: follow links to other sites too (default: stay on the start pages' sites)"),
      Flag.withDefault(false)
    ),
    allowPrivate: Flag.String("allow-private").pipe(
      Flag.withDescription(
        "Crawl: hosts on private, loopback or link-local addresses that may be crawled, comma-separated " +
          "(e.g. intranet.local,10.0.0.5:8080), or 'all'"
      ),
      Flag.optional
    ),
    quiet: Flag.Boolean("quiet").pipe(Flag.withDescription("No progress display"), Flag.withDefault(false)),
    allowShrink: Flag.Boolean("allow-shrink").pipe(
      Flag.withDescription(
        "Write the snapshot even when the run read no document, or when --fresh would leave fewer documents than it has " +
          "(otherwise such a run writes nothing and exits 1)"
      ),
      Flag.withDefault(false)
    ),
    keepStarter: Flag.Boolean("keep-starter").pipe(
      Flag.withDescription("Add to the starter index (npm READMEs built on the first start) instead of replacing it"),
      Flag.withDefault(false)
    ),
    to: Flag.String("to").pipe(
      Flag.withDescription(
        "Load the documents into an OpenSearch/Elasticsearch index instead of a snapshot: opensearch://host:9200/index " +
          "(opensearch+https:// for TLS); credentials from OPENSEARCH_USERNAME and OPENSEARCH_PASSWORD"
      ),
      Flag.optional
    ),
    includeGenerated: Flag.Boolean("include-generated").pipe(
      Flag.withDescription("Also index generated index pages (Sphinx genindex/modindex/search, Javadoc index-all, ...), left out by default"),
      Flag.withDefault(false)
    ),
    workers: positiveInt(
      "workers",
      `Threads that extract pages of folders and WARC files (default: all cores, ${defaultWorkers()} here; 1 extracts on the main thread)`
    )
  },
  Effect.fn("periscope.index")(function*(input) {
    const settings = yield* loadSettings
    const out = Option.getOrUndefined(input.out) ?? settings.search.snapshot ?? resolve(settings.dataDir, "index.snapshot")
    const value = <A>(option: Option.Option<A>) => Option.getOrUndefined(option)
    const allow = value(input.allowPrivate)
    const sources = yield* Effect.try({
      try: () =>
        openSources(input.sources, {
          baseUrl: value(input.baseUrl),
          maxFileBytes: value(input.maxBytes),
          crawl: {
            maxPages: value(input.maxPages),
            maxDepth: value(input.maxDepth),
            concurrency: value(input.concurrency),
            delayMs: value(input.delayMs),
            timeoutMs: value(input.timeoutMs),
            maxBytes: value(input.maxBytes),
            maxRedirects: value(input.maxRedirects),
            anySite: input.anySite
          },
          allowPrivate: allow === undefined ? false : allow.trim() === "all" ? true : allow.split(",").map((h) => h.trim()).filter((h) => h !== ""),
          keepGenerated: input.includeGenerated
        }),
      catch: (error) => error as Error
    })
    const workers = value(input.workers) ?? defaultWorkers()
    if (!(workers >= 1 && workers <= 256)) {
      return yield* Effect.fail(Object.assign(new Error(`must be an integer from 1 to 256, got ${workers}`), { argument: "--workers" }))
    }
    const to = value(input.to)
    if (to !== undefined) {
      const target = parseOpenSearchTarget(to)
      if (typeof target === "string") return yield* Effect.fail(Object.assign(new Error(target), { argument: "--to" }))
      const secret = (name: string) => (process.env[name] ? Redacted.make(process.env[name]!) : undefined)
      yield* Console.error(`Indexing ${sources.map((s) => s.describe).join(", ")} into OpenSearch ${target.url}/${target.index}`)
      const loaded = yield* indexOpenSearch({
        sources,
        connection: { ...target, username: secret("OPENSEARCH_USERNAME"), password: secret("OPENSEARCH_PASSWORD") },
        fresh: input.fresh,
        allowShrink: input.allowShrink,
        progress: input.quiet ? silentProgress : terminalProgress(),
        workers
      }).pipe(Effect.provide(FetchHttpClient.layer))
      yield* Console.log(formatOpenSearchSummary(loaded))
      if (loaded.notWritten !== undefined) {
        yield* Console.error(`periscope: ${loaded.target}: not written: ${loaded.notWritten}`)
        process.exitCode = 1
      } else if (loaded.failed > 0 || (loaded.bulk?.failed ?? 0) > 0) process.exitCode = 2
      return
    }
    yield* Console.error(`Indexing ${sources.map((s) => s.describe).join(", ")} into ${out}`)
    const summary = yield* indexSnapshot({
      sources,
      out,
      fresh: input.fresh,
      allowShrink: input.allowShrink,
      keepStarter: input.keepStarter,
      progress: input.quiet ? silentProgress : terminalProgress(),
      workers,
      // search.embeddings: the passages' vectors go into the snapshot (docs/hybrid.md).
      embeddings: settings.file.search?.embeddings,
      embedProgress: input.quiet ? () => undefined : undefined
    }).pipe(
      // Ctrl-C interrupts the run (NodeRuntime.runMain): requests in flight are aborted and nothing is written.
      Effect.onInterrupt(() =>
        Effect.sync(() => process.stderr.write(`\nperiscope: interrupted; the snapshot ${out} was left as it was\n`))
      )
    )
    yield* Console.log(formatSummary(summary))
    // Exit 1: nothing written (the run would have lost data); 2: written, but some inputs were damaged or failed.
    if (summary.notWritten !== undefined) {
      yield* Console.error(`periscope: ${out}: not written: ${summary.notWritten}`)
      process.exitCode = 1
    } else if (summary.failed > 0) process.exitCode = 2
  })
).pipe(
  Command.withDescription("Build or update the search snapshot from folders, archives, JSONL files or a crawl"),
  Command.withExamples([
    { command: "periscope index ./site=https://docs.example.com/", description: "Index a folder of HTML published at a URL" },
    { command: "periscope index CC-MAIN-example.warc.gz --out data/cc.snapshot", description: "Index a Common Crawl WARC file" },
    { command: "periscope index https://docs.example.com/sitemap.xml --max-pages 500", description: "Crawl a site from its sitemap" }
  ])
)

const periscope = Command.make("periscope").pipe(
  Command.withDescription("Periscope: self-hostable search and chat for AI agents"),
  Command.withSubcommands([serveCommand, index, mcpCommand, keysCommand, reloadCommand])
)

/** The version in the package.json above this file (the checkout's, or the installed package's from dist/). */
const packageVersion = (): string => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, "package.json")
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string }
      if (pkg.name === "periscope-search" && pkg.version !== undefined) return pkg.version
    }
    if (dirname(dir) === dir) return "unknown"
  }
}

periscope.pipe(
  Command.run({ version: packageVersion() }),
  // Bad arguments and snapshot problems are reported as one line naming the argument or file.
  Effect.catch((error: unknown) =>
    Effect.sync(() => {
      const tagged = error as { _tag?: string; argument?: string; subject?: string; setting?: string; message?: string }
      const where = tagged.argument ?? tagged.subject ?? tagged.setting
      process.stderr.write(`periscope: ${where === undefined ? "" : `${where}: `}${tagged.message ?? String(error)}\n`)
      process.exitCode = 1
    })
  ),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
