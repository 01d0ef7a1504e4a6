/**
 * Run under Deno by engineNodeDeno.test.ts: loads a snapshot file and prints the answers
 * to the given queries as JSON, so the test can compare them with Node's for the same bytes.
 *
 *   deno run --allow-read test/index/deno-engine-probe.ts <snapshot> <queries.json>
 */
import { decodeSnapshot } from "../../core/index/Snapshot.ts"

declare const Deno: {
  readonly args: ReadonlyArray<string>
  readFile(path: string): Promise<Uint8Array>
  readTextFile(path: string): Promise<string>
}

const [snapshotPath, queriesPath] = Deno.args
if (snapshotPath === undefined || queriesPath === undefined) throw new Error("usage: deno-engine-probe.ts <snapshot> <queries.json>")
const index = decodeSnapshot(await Deno.readFile(snapshotPath))
const queries = JSON.parse(await Deno.readTextFile(queriesPath)) as Array<string>
const answers = queries.map((q) => ({ query: q, web: index.search(q, 10), images: index.searchImages(q, 10) }))
console.log(JSON.stringify({ documents: index.documentCount, images: index.imageCount, answers }))
