/**
 * The Periscope side of test/bench/http.ts's shared-state and observability
 * runs: the Node adapter's HTTP server built by the application's composition
 * from a config file's content (BENCH_CONFIG, JSON: metrics, tracing, Redis),
 * over the fixture and scripted backends, in its own process.
 * Usage: BENCH_CONFIG='{...}' node stateBenchServer.ts <port> <key>
 */
import { createServer } from "node:http"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { HttpRouter } from "effect/http"
import { nodePlatform } from "../../../adapters/node/platform.ts"
import { PeriscopeRoutes } from "../../../core/api/HttpApp.ts"
import { appLayer } from "../../../core/app/Application.ts"
import { hashKey } from "../../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../../core/backends/SampleDocuments.ts"
import { ScriptedChat, unconfiguredChat } from "../../../core/backends/ScriptedChat.ts"
import type { ConfigFile } from "../../../core/config/ConfigFile.ts"
import { settingsOf } from "../../../core/config/Settings.ts"

const [port, key] = process.argv.slice(2)
const config = JSON.parse(process.env.BENCH_CONFIG ?? "{}") as ConfigFile
// The bench key's limit is far above what the run sends: the rate limiter still runs on every request.
const services = appLayer(settingsOf(config), [{ name: "bench", sha256: hashKey(key!), requestsPerMinute: 1_000_000_000 }], {
  search: { _tag: "Layer", layer: FixtureSearch.layer(sampleDocuments) },
  chatModel: ScriptedChat.layer(unconfiguredChat)
}).pipe(Layer.provide(nodePlatform), Layer.orDie)
const server = HttpRouter.serve(PeriscopeRoutes, { disableLogger: true }).pipe(
  Layer.provide(services),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(port), host: "127.0.0.1" }))
)
NodeRuntime.runMain(Layer.launch(server))
