/**
 * `npm run bench`: every benchmark, one after another, each in its own
 * process so they never share a heap or a core with each other.
 *   npm run bench                # all
 *   npm run bench -- http gateway
 */
import { spawnSync } from "node:child_process"
import { resolve } from "node:path"

const all = ["relevance", "http", "gateway", "ingest", "search", "searchContent", "queryRewrites", "languages", "search-upstreams", "scale", "fetch", "fetchMany", "mcp", "wires", "responses", "stall"]
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : all
let failed = 0
for (const name of chosen) {
  if (!all.includes(name)) {
    console.error(`unknown benchmark ${JSON.stringify(name)}; choose from ${all.join(", ")}`)
    process.exit(2)
  }
  console.log(`\n=== test/bench/${name}.ts ===`)
  const result = spawnSync(process.execPath, [resolve(import.meta.dirname, `${name}.ts`)], { stdio: "inherit" })
  if (result.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
