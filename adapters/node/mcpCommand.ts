/**
 * `periscope mcp`: the MCP server over stdin and stdout, for desktop agent
 * hosts that start it as their child. The same settings, data directory and
 * index as `serve`; no key (the user runs it as themselves). Nothing but
 * protocol messages reaches stdout: every log line goes to stderr.
 */
import { NodeStdio } from "@effect/platform-node"
import { Context, Effect, Layer, Logger, Option, Stdio } from "effect"
import { Command, Flag } from "effect/cli"
import { McpEndpoint } from "../../core/api/mcp/McpEndpoint.ts"
import { serveMcpLines } from "../../core/api/mcp/McpStdio.ts"
import { appLayer } from "../../core/app/Application.ts"
import { searchChoiceOf } from "../../core/app/SearchBackend.ts"
import { BrowserRenderer } from "./browserRenderer.ts"
import { nodeEngineHooks, nodePlatform } from "./platform.ts"
import { loadSettings } from "./settings.ts"

const writeLine = (line: string) => Effect.sync(() => void process.stdout.write(`${line}\n`))

/** Serves MCP on stdio until the host closes our input. */
export const serveMcpStdio = Effect.gen(function*() {
  const settings = yield* loadSettings
  yield* Effect.logInfo(`Periscope MCP on stdio (data in ${settings.dataDir})`)
  const services = appLayer(settings, [], {
    // No warm-up: a desktop host waits for initialize, and its first calls warm the query path.
    search: searchChoiceOf(settings.search, settings.search.snapshot, 0),
    hooks: nodeEngineHooks(settings)
  }).pipe(Layer.provide([nodePlatform, BrowserRenderer.layerConfig(settings.file.fetch)]))
  const context = yield* Layer.build(services)
  const endpoint = Context.get(context, McpEndpoint)
  const stdio = yield* Stdio.Stdio
  yield* serveMcpLines(endpoint.dispatcher, stdio.stdin, writeLine)
}).pipe(
  Effect.scoped,
  Effect.provide(NodeStdio.layer),
  Effect.provideService(Logger.LogToStderr, true)
)

export const mcpCommand = Command.make(
  "mcp",
  {
    dataDir: Flag.String("data-dir").pipe(Flag.withDescription("Data directory: snapshot and settings as `serve` uses them (PERISCOPE_DATA_DIR; default ./.periscope)"), Flag.optional),
    config: Flag.String("config").pipe(Flag.withDescription("Config file, JSON (PERISCOPE_CONFIG)"), Flag.optional)
  },
  Effect.fn("periscope.mcp")(function*(input) {
    if (Option.isSome(input.dataDir)) process.env.PERISCOPE_DATA_DIR = input.dataDir.value
    if (Option.isSome(input.config)) process.env.PERISCOPE_CONFIG = input.config.value
    yield* serveMcpStdio.pipe(
      Effect.catchTag("SettingsError", (error) =>
        Effect.sync(() => {
          process.stderr.write(`Invalid configuration: ${error.setting}: ${error.message}\n`)
          process.exitCode = 1
        }))
    )
  })
).pipe(Command.withDescription("Run the MCP server over stdin/stdout, for agent hosts (no key needed)"))
