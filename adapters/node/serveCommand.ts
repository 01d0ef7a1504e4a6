/**
 * `periscope serve`: the HTTP server, as `npm start` runs it. The flags are
 * the environment variables the server reads (a flag wins over the variable),
 * so the server module itself stays the one entry point for both.
 */
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"

const setting = (name: string, description: string) => Flag.String(name).pipe(Flag.withDescription(description), Flag.optional)

export const serveCommand = Command.make(
  "serve",
  {
    port: Flag.Int("port").pipe(Flag.withDescription("Port to listen on (PORT; default 8080)"), Flag.optional),
    host: setting("host", "Address to listen on (PERISCOPE_HOST; default all)"),
    dataDir: setting("data-dir", "Data directory: keys, snapshot, PID file (PERISCOPE_DATA_DIR; default ./.periscope)"),
    config: setting("config", "Config file, JSON (PERISCOPE_CONFIG)"),
    keysFile: setting("keys-file", "Keys file of hashed keys (PERISCOPE_KEYS_FILE)")
  },
  Effect.fn("periscope.serve")(function*(input) {
    const env: Record<string, Option.Option<string>> = {
      PORT: Option.map(input.port, String),
      PERISCOPE_HOST: input.host,
      PERISCOPE_DATA_DIR: input.dataDir,
      PERISCOPE_CONFIG: input.config,
      PERISCOPE_KEYS_FILE: input.keysFile
    }
    for (const [name, value] of Object.entries(env)) if (Option.isSome(value)) process.env[name] = value.value
    // The server module runs itself (its own runtime, signal handling and exit code); this command ends
    // here and leaves it running.
    yield* Effect.promise(() => import("./main.ts"))
  })
).pipe(Command.withDescription("Run the Periscope HTTP server (what `npm start` runs)"))
