/**
 * Every setting of a Periscope server, read once at start: environment
 * variables first, then the config file (PERISCOPE_CONFIG) for the rest.
 * Pure: the adapter supplies the environment (as Effect's ConfigProvider)
 * and a way to read a file. Every failure names the setting and the rule.
 */
import { Config, Effect, Result, Schema } from "effect"
import { decodeJsonText, decoderFor } from "../schema/Decode.ts"
import type { InvalidInput } from "../schema/InvalidInput.ts"
import { DEFAULT_REQUESTS_PER_MINUTE } from "../auth/KeyRecord.ts"
import { ConfigFile } from "./ConfigFile.ts"

export class SettingsError extends Schema.TaggedError<SettingsError>()("SettingsError", {
  /** The environment variable or file the bad value came from. */
  setting: Schema.String,
  message: Schema.String
}) {}

export interface Settings {
  readonly port: number
  readonly host: string | undefined
  /** As configured (relative paths are the adapter's to resolve). */
  readonly dataDir: string
  /** Plain keys from PERISCOPE_API_KEYS; hashed before use, never logged. */
  readonly apiKeys: ReadonlyArray<string>
  readonly keysFile: string | undefined
  readonly rateLimitPerMinute: number
  readonly streamKeepAliveSeconds: number
  readonly logRequests: boolean
  readonly search: {
    readonly backend: "engine" | "fixture"
    /** Snapshot path or URL; undefined means <dataDir>/index.snapshot. */
    readonly snapshot: string | undefined
    readonly documents: string | undefined
  }
  readonly configFile: string | undefined
  /** The parsed config file, for the parts other modules read (chat routing). */
  readonly file: ConfigFile
}

/** Reads a text file for the settings; fails with a message such as "cannot be read: ENOENT". */
export type ReadText = (path: string) => Effect.Effect<string, string>

const optionalEnv = (name: string) =>
  Config.String(name).pipe(Config.option, Config.map((o) => (o._tag === "Some" && o.value.trim() !== "" ? o.value.trim() : undefined)))

const fromConfigError = (error: { readonly message: string }) => {
  const [first, where] = error.message.split("\n")
  const setting = where?.match(/at \["([^"]+)"\]/)?.[1] ?? "configuration"
  return new SettingsError({ setting, message: (first ?? error.message).replace(/^SchemaError\(/, "").replace(/^Expected /, "must be ") })
}

/** Reads a JSON file and decodes it; errors name the setting that pointed at the file. */
export const readJsonFile = <A>(
  readText: ReadText,
  path: string,
  setting: string,
  decode: (input: unknown) => Result.Result<A, InvalidInput>
): Effect.Effect<A, SettingsError> =>
  Effect.gen(function*() {
    const where = `${setting} (${path})`
    const text = yield* Effect.mapError(readText(path), (reason) => new SettingsError({ setting: where, message: reason }))
    const decoded = decodeJsonText(text, "file", decode)
    return Result.isSuccess(decoded) ? decoded.success : yield* new SettingsError({ setting: where, message: decoded.failure.message })
  })

const decodeConfigFile = decoderFor(ConfigFile, "file")

export const loadSettings = (readText: ReadText): Effect.Effect<Settings, SettingsError> =>
  Effect.gen(function*() {
    const env = yield* Config.all({
      port: Config.Port("PORT").pipe(Config.option),
      host: optionalEnv("PERISCOPE_HOST"),
      apiKeys: optionalEnv("PERISCOPE_API_KEYS"),
      keysFile: optionalEnv("PERISCOPE_KEYS_FILE"),
      dataDir: optionalEnv("PERISCOPE_DATA_DIR"),
      configFile: optionalEnv("PERISCOPE_CONFIG")
    }).pipe(Effect.mapError(fromConfigError))
    const file: ConfigFile = env.configFile === undefined
      ? {}
      : yield* readJsonFile(readText, env.configFile, "PERISCOPE_CONFIG", decodeConfigFile)
    const apiKeys = env.apiKeys === undefined ? [] : env.apiKeys.split(",").map((k) => k.trim()).filter((k) => k !== "")
    if (env.apiKeys !== undefined && apiKeys.length === 0) {
      return yield* new SettingsError({ setting: "PERISCOPE_API_KEYS", message: "must list at least one key (comma-separated)" })
    }
    return {
      port: env.port._tag === "Some" ? env.port.value : file.port ?? 8080,
      host: env.host ?? file.host,
      dataDir: env.dataDir ?? file.dataDir ?? ".periscope",
      apiKeys,
      keysFile: env.keysFile ?? file.keysFile,
      rateLimitPerMinute: file.rateLimitPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE,
      streamKeepAliveSeconds: file.streamKeepAliveSeconds ?? 15,
      logRequests: file.logRequests ?? false,
      search: {
        backend: file.search?.backend ?? "engine",
        snapshot: file.search?.snapshot,
        documents: file.search?.documents
      },
      configFile: env.configFile,
      file
    }
  })
