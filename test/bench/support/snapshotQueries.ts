/**
 * One round of the scale bench's query timing: a fresh process opens a snapshot as `npm start`
 * does (with its warm-up queries, core/index/WarmUp.ts), waits until the page text is read in, and times both query sets with snippets and
 * without (one warm-up pass first). The scale bench runs it for each size in rotating rounds, so
 * that 100k and 1M are timed minutes apart at most and their ratio can be paired within a round.
 * Prints one JSON line: {"andLike", "orLike", "andLikeBare", "orLikeBare"} of LatencyFigures.
 *
 *   node snapshotQueries.ts <snapshot path> <queries.json>
 */
import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { openInPlace } from "../../../adapters/node/snapshotFile.ts"
import { warmUp } from "../../../core/index/WarmUp.ts"
import type { BenchQueries } from "./benchQueries.ts"
import { timeQuerySets } from "./queryTiming.ts"

const [snapshotPath, queriesPath] = process.argv.slice(2)
if (snapshotPath === undefined || queriesPath === undefined) throw new Error("usage: snapshotQueries.ts <snapshot path> <queries.json>")
const queries = JSON.parse(readFileSync(queriesPath, "utf8")) as BenchQueries
const { index, settled } = await Effect.runPromise(openInPlace(snapshotPath))
warmUp(index)
const text = await settled
if (text !== "held") throw new Error(`${snapshotPath}: the page text was not read in (${text})`)

const figures = await timeQuerySets(queries, (q) => index.search(q, 10).hits.length, (q) => index.rank(q, 10).length)
process.stdout.write(`${JSON.stringify(figures)}\n`)
process.exit(0)
