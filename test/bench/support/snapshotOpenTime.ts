/**
 * How long a fresh process takes to open a snapshot file as `npm start` does
 * (adapters/node/snapshotFile.ts openInPlace: every byte checked, the index answering, the page
 * text still on disk). Prints one JSON line, {"openMs": ...}; the scale bench runs it after each
 * build, so its load figure is a server's start and not the building process's, which still
 * holds the index it built and the bytes it saved.
 *
 *   node snapshotOpenTime.ts <snapshot path>
 */
import { Effect } from "effect"
import { openInPlace } from "../../../adapters/node/snapshotFile.ts"

const path = process.argv[2]
if (path === undefined) throw new Error("usage: snapshotOpenTime.ts <snapshot path>")
const start = performance.now()
const { index, settled } = await Effect.runPromise(openInPlace(path))
const openMs = performance.now() - start
if (index.documentCount === 0) throw new Error(`${path} holds no documents`)
process.stdout.write(`${JSON.stringify({ openMs })}\n`)
// Exit with no background read of the page text in flight: one run that exited during that read
// printed its time and then never ended.
await settled
process.exit(0)
