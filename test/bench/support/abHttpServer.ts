/**
 * The server of test/bench/httpAB.ts: one process serving the Node adapter's
 * HTTP server (express lane on, as `npm start` runs it) from several source
 * trees, each on its own port, over the fixture and scripted backends. One
 * process, so that the trees share one JIT and one heap: separate processes
 * running the same code differed by up to 25% in CPU per request, more than
 * the changes this compares.
 * Usage: node abHttpServer.ts <key> <tree>:<port> [<tree>:<port> ...]
 */
import { Effect, Layer, Scope } from "effect"

const [key, ...trees] = process.argv.slice(2)
const scope = Scope.makeUnsafe()
for (const tree of trees) {
  const at = tree.lastIndexOf(":")
  const [root, port] = [tree.slice(0, at), Number(tree.slice(at + 1))]
  // Each tree's own modules (typed as this tree's: the revision's may differ in details the bench does not use).
  const { startNodeServer } = (await import(`${root}/adapters/node/nodeServer.ts`)) as typeof import("../../../adapters/node/nodeServer.ts")
  const { hashKey } = (await import(`${root}/core/auth/KeyRecord.ts`)) as typeof import("../../../core/auth/KeyRecord.ts")
  const { servicesLayer } = (await import(`${root}/test/support/servers.ts`)) as typeof import("../../support/servers.ts")
  // The bench key's limit is far above what the run sends: the rate limiter still runs on every request.
  const services = servicesLayer({ keys: [{ name: "bench", sha256: hashKey(key), requestsPerMinute: 1_000_000_000 }] })
  await Effect.runPromise(
    Effect.flatMap(Layer.build(services), (context) => startNodeServer(context, { port, host: "127.0.0.1" })).pipe(Scope.provide(scope))
  )
}
process.on("SIGTERM", () => process.exit(0))
process.stdout.write("listening\n")
