/**
 * The Periscope side of test/bench/http.ts's shared-state and observability
 * runs: one process serving several configurations, each on its own port,
 * each the Node adapter's HTTP server built by the application's composition
 * from a config file's content (BENCH_CONFIGS, a JSON array: metrics, tracing,
 * Redis), over the fixture and scripted backends. One process for all of them,
 * so that they share one JIT and heap: two processes with the same
 * configuration differed by up to 12% in req/s, more than the costs measured.
 * Usage: BENCH_CONFIGS='[{...}, ...]' node stateBenchServer.ts <port,port,...> <key>
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { startNodeServer } from "../../../adapters/node/nodeServer.ts"
import { nodePlatform } from "../../../adapters/node/platform.ts"
import { appLayer } from "../../../core/app/Application.ts"
import { hashKey } from "../../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../../core/backends/SampleDocuments.ts"
import { ScriptedChat, unconfiguredChat } from "../../../core/backends/ScriptedChat.ts"
import type { ConfigFile } from "../../../core/config/ConfigFile.ts"
import { settingsOf } from "../../../core/config/Settings.ts"

const [ports, key] = process.argv.slice(2)
const configs = JSON.parse(process.env.BENCH_CONFIGS ?? "[{}]") as Array<ConfigFile>
const portList = ports!.split(",").map(Number)
if (portList.length !== configs.length) throw new Error(`${configs.length} configurations but ${portList.length} ports`)

const serverFor = (config: ConfigFile, port: number) =>
  Effect.gen(function*() {
    // The bench key's limit is far above what the run sends: the rate limiter still runs on every request.
    const services = appLayer(settingsOf(config), [{ name: "bench", sha256: hashKey(key!), requestsPerMinute: 1_000_000_000 }], {
      search: { _tag: "Layer", layer: FixtureSearch.layer(sampleDocuments) },
      chatModel: ScriptedChat.layer(unconfiguredChat)
    }).pipe(Layer.provide(nodePlatform), Layer.orDie)
    yield* startNodeServer(yield* Layer.build(services), { port, host: "127.0.0.1" })
  })
NodeRuntime.runMain(Effect.scoped(Effect.andThen(Effect.forEach(configs, (config, i) => serverFor(config, portList[i]!)), Effect.never)))
