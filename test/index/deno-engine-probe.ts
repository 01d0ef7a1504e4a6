/**
 * Run under Deno by engineNodeDeno.test.ts: loads a snapshot file (its checksum checked with
 * the WebAssembly xxHash32, as the adapters check it) and prints the answers to the given
 * queries as JSON, so the test can compare them with Node's for the same bytes.
 *
 *   deno run --allow-read test/index/deno-engine-probe.ts <snapshot> <queries.json>
 */
import { Effect } from "effect"
import { decodeSnapshot } from "../../core/index/Snapshot.ts"
import { fastXxHash32 } from "../../core/index/WasmXxHash32.ts"
import { jsXxHash32 } from "../../core/index/XxHash32.ts"

declare const Deno: {
  readonly args: ReadonlyArray<string>
  readFile(path: string): Promise<Uint8Array>
  readTextFile(path: string): Promise<string>
}

const [snapshotPath, queriesPath] = Deno.args
if (snapshotPath === undefined || queriesPath === undefined) throw new Error("usage: deno-engine-probe.ts <snapshot> <queries.json>")
const hashWith = await Effect.runPromise(fastXxHash32)
const index = decodeSnapshot(await Deno.readFile(snapshotPath), hashWith)
const queries = JSON.parse(await Deno.readTextFile(queriesPath)) as Array<string>
const answers = queries.map((q) => ({ query: q, web: index.search(q, 10), images: index.searchImages(q, 10) }))
console.log(JSON.stringify({ checksum: hashWith === jsXxHash32 ? "js" : "wasm", documents: index.documentCount, images: index.imageCount, answers }))
