/**
 * The Periscope side of test/bench/http.ts: the Node adapter's HTTP server
 * (adapters/node/nodeServer.ts: the express lane for the hot routes, the full
 * route stack behind it, auth, rate limit, validation and error rendering on
 * both) over the fixture search and scripted chat backends, in its own
 * process. Usage: node periscopeBenchServer.ts <port> <key> [full]
 * ("full": every route through the full stack, the lane off).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { startNodeServer } from "../../../adapters/node/nodeServer.ts"
import { hashKey } from "../../../core/auth/KeyRecord.ts"
import { servicesLayer } from "../../support/servers.ts"

const [port, key, mode] = process.argv.slice(2)
// The bench key's limit is far above what the run sends: the rate limiter still runs on every request.
const services = servicesLayer({ keys: [{ name: "bench", sha256: hashKey(key!), requestsPerMinute: 1_000_000_000 }] })
NodeRuntime.runMain(Effect.scoped(Effect.gen(function*() {
  const context = yield* Layer.build(services)
  yield* startNodeServer(context, { port: Number(port), host: "127.0.0.1", expressLane: mode !== "full" })
  return yield* Effect.never
})))
