/**
 * The index a fresh install starts with: the documentation of the packages in
 * node_modules (READMEs linked to their npm pages, docs folders linked to the
 * packaged files), built without network on the first `npm start` when no
 * snapshot exists, so web and image search answer real results at once.
 * The start path calls `ensureStarterIndex` (nothing happens when a snapshot
 * is already there) and logs `message`. The snapshot is marked as the starter
 * (a file beside it): the operator's first `periscope index` replaces it
 * rather than mixing their pages with npm READMEs, unless --keep-starter.
 */
import { existsSync } from "node:fs"
import { resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { formatSummary, type IndexRunError, indexSnapshot, type IndexSummary } from "./indexCommand.ts"
import { nodeModulesSource } from "./sources/nodeModulesSource.ts"

export interface StarterIndexOptions {
  /** PERISCOPE_DATA_DIR; the snapshot goes to <dataDir>/index.snapshot unless `out` says otherwise. */
  readonly dataDir: string
  /** Where installed packages are (default: the node_modules our own dependencies are in). */
  readonly nodeModules?: string | undefined
  readonly out?: string | undefined
}

export interface StarterIndexResult {
  readonly summary: IndexSummary
  /** What to log: what was indexed, and how to index your own site instead. */
  readonly message: string
}

export const starterSnapshotPath = (options: StarterIndexOptions): string =>
  options.out ?? resolve(options.dataDir, "index.snapshot")

const howToIndexYourOwn = (out: string) =>
  [
    "To search your own pages, index them (your first index replaces this starter index; --keep-starter adds to it instead):",
    "  npm run index -- ./public=https://docs.example.com/      a folder of .html files and the URL it is published at",
    "  npm run index -- https://docs.example.com/sitemap.xml     a crawl from a sitemap (robots.txt honoured)",
    "  npm run index -- crawl.warc.gz  pages.jsonl               WARC archives and JSONL documents",
    `The snapshot is ${out}; restart Periscope, or send it SIGHUP, to serve the new one.`
  ].join("\n")

/**
 * The node_modules folder Periscope's own dependencies are installed in: a checkout's, a
 * project's that installed the package, or a global install's (where the working directory
 * has no node_modules at all).
 */
export const ownNodeModules = (): string => {
  const entry = fileURLToPath(import.meta.resolve("effect"))
  const marker = `${sep}node_modules${sep}`
  const at = entry.lastIndexOf(marker)
  return at === -1 ? resolve("node_modules") : entry.slice(0, at + marker.length - 1)
}

/**
 * Periscope's own package, left out where it is installed: its README holds the README's example
 * questions word for word, so it would answer every one of them first.
 */
const OWN_PACKAGE = "periscope-search"

/** Builds the starter snapshot from node_modules (replacing any snapshot at that path). */
export const buildStarterIndex = (options: StarterIndexOptions): Effect.Effect<StarterIndexResult, IndexRunError> => {
  const nodeModules = options.nodeModules ?? ownNodeModules()
  const out = starterSnapshotPath(options)
  return Effect.map(
    indexSnapshot({ sources: [nodeModulesSource(nodeModules, [OWN_PACKAGE])], out, fresh: true, starter: true, allowShrink: true }),
    (summary) => ({
      summary,
      message: [
        `No search index was found, so Periscope built a starter index: ${summary.documents} documentation ` +
        `pages of the packages installed in ${nodeModules} (no network used).`,
        formatSummary(summary),
        howToIndexYourOwn(out)
      ].join("\n")
    })
  )
}

/** Builds the starter snapshot only when none exists yet; undefined when one was already there. */
export const ensureStarterIndex = (
  options: StarterIndexOptions
): Effect.Effect<StarterIndexResult | undefined, IndexRunError> =>
  existsSync(starterSnapshotPath(options)) ? Effect.succeed(undefined) : buildStarterIndex(options)
