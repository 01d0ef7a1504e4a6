/**
 * The Periscope side of test/bench/http.ts: the Node adapter's HTTP server
 * (NodeHttpServer, the full route stack with auth, rate limit, validation and
 * error boundary) over the fixture search and scripted chat backends, in its
 * own process. Usage: node periscopeBenchServer.ts <port> <key>
 */
import { createServer } from "node:http"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { HttpRouter } from "effect/http"
import { PeriscopeRoutes } from "../../../core/api/HttpApp.ts"
import { hashKey } from "../../../core/auth/KeyRecord.ts"
import { servicesLayer } from "../../support/servers.ts"

const [port, key] = process.argv.slice(2)
// The bench key's limit is far above what the run sends: the rate limiter still runs on every request.
const services = servicesLayer({ keys: [{ name: "bench", sha256: hashKey(key!), requestsPerMinute: 1_000_000_000 }] })
const server = HttpRouter.serve(PeriscopeRoutes, { disableLogger: true }).pipe(
  Layer.provide(services),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(port), host: "127.0.0.1" }))
)
NodeRuntime.runMain(Layer.launch(server))
