/**
 * Configuration of the Node adapter, read once at start: environment
 * variables, then the config file (PERISCOPE_CONFIG) for the rest. Every
 * failure names the setting and the rule; the process does not start on one.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { Config, Effect, Result, Schema } from "effect"
import { invalidInput } from "../../core/api/InvalidInput.ts"
import { makeBodyDecoder, parseJson } from "../../core/api/RequestBody.ts"
import { DEFAULT_REQUESTS_PER_MINUTE } from "../../core/auth/KeyRecord.ts"
import { ConfigFile } from "../../core/config/ConfigFile.ts"

export class SettingsError extends Schema.TaggedError<SettingsError>()("SettingsError", {
  /** The environment variable or file the bad value came from. */
  setting: Schema.String,
  message: Schema.String
}) {}

export interface Settings {
  readonly port: number
  readonly host: string | undefined
  readonly dataDir: string
  /** Plain keys from PERISCOPE_API_KEYS; hashed before use, never logged. */
  readonly apiKeys: ReadonlyArray<string>
  readonly keysFile: string | undefined
  readonly rateLimitPerMinute: number
  readonly streamKeepAliveSeconds: number
  readonly search: {
    readonly backend: "engine" | "fixture"
    readonly snapshot: string
    readonly documents: string | undefined
  }
  readonly configFile: string | undefined
  /** The parsed config file, for the parts other modules read (chat routing). */
  readonly file: ConfigFile
}

const optionalEnv = (name: string) => Config.String(name).pipe(Config.option, Config.map((o) => (o._tag === "Some" && o.value.trim() !== "" ? o.value.trim() : undefined)))

const fromConfigError = (error: { readonly message: string }) => {
  const [first, where] = error.message.split("\n")
  const setting = where?.match(/at \["([^"]+)"\]/)?.[1] ?? "configuration"
  return new SettingsError({ setting, message: (first ?? error.message).replace(/^SchemaError\(/, "").replace(/^Expected /, "must be ") })
}

const decodeConfigFile = makeBodyDecoder(ConfigFile)

const readConfigFile = (path: string): Effect.Effect<ConfigFile, SettingsError> =>
  Effect.gen(function*() {
    const setting = `PERISCOPE_CONFIG (${path})`
    const text = yield* Effect.try({
      try: () => readFileSync(path, "utf8"),
      catch: (e) => new SettingsError({ setting, message: `cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` })
    })
    const json = parseJson(text)
    if (Result.isFailure(json)) return yield* new SettingsError({ setting, message: json.failure.message.replace("request body", "file") })
    const decoded = decodeConfigFile(json.success)
    if (Result.isFailure(decoded)) return yield* new SettingsError({ setting, message: decoded.failure.message.replace(/^request body/, "file") })
    return decoded.success
  })

/** Reads and validates every setting. */
export const loadSettings: Effect.Effect<Settings, SettingsError> = Effect.gen(function*() {
  const env = yield* Config.all({
    port: Config.Port("PORT").pipe(Config.option),
    host: optionalEnv("PERISCOPE_HOST"),
    apiKeys: optionalEnv("PERISCOPE_API_KEYS"),
    keysFile: optionalEnv("PERISCOPE_KEYS_FILE"),
    dataDir: optionalEnv("PERISCOPE_DATA_DIR"),
    configFile: optionalEnv("PERISCOPE_CONFIG")
  }).pipe(Effect.mapError(fromConfigError))
  const file: ConfigFile = env.configFile === undefined ? {} : yield* readConfigFile(env.configFile)
  const dataDir = resolve(env.dataDir ?? file.dataDir ?? ".periscope")
  const apiKeys = env.apiKeys === undefined ? [] : env.apiKeys.split(",").map((k) => k.trim()).filter((k) => k !== "")
  if (env.apiKeys !== undefined && apiKeys.length === 0) {
    return yield* new SettingsError({ setting: "PERISCOPE_API_KEYS", message: "must list at least one key (comma-separated)" })
  }
  return {
    port: env.port._tag === "Some" ? env.port.value : file.port ?? 8080,
    host: env.host ?? file.host,
    dataDir,
    apiKeys,
    keysFile: env.keysFile ?? file.keysFile,
    rateLimitPerMinute: file.rateLimitPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE,
    streamKeepAliveSeconds: file.streamKeepAliveSeconds ?? 15,
    search: {
      backend: file.search?.backend ?? "fixture",
      snapshot: resolve(file.search?.snapshot ?? resolve(dataDir, "index.snapshot")),
      documents: file.search?.documents
    },
    configFile: env.configFile,
    file
  }
})

// Re-exported for the CLI, which reports settings errors the same way.
export { invalidInput }
