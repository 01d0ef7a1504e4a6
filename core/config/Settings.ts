/**
 * Every setting of a Periscope server, read once at start: environment
 * variables first, then the config file (PERISCOPE_CONFIG) for the rest.
 * Pure: the adapter supplies the environment (as Effect's ConfigProvider)
 * and a way to read a file. Every failure names the setting and the rule.
 */
import { Config, Effect, FileSystem, type PlatformError, Result, Schema } from "effect"
import { decodeJsonText, decoderFor } from "../schema/Decode.ts"
import type { InvalidInput } from "../schema/InvalidInput.ts"
import { DEFAULT_REQUESTS_PER_MINUTE } from "../auth/KeyRecord.ts"
import { ConfigFile } from "./ConfigFile.ts"
import type { ExpansionConfig } from "./ExpansionConfig.ts"
import { type ObservabilitySettings, observabilitySettingsOf } from "./ObservabilityConfig.ts"
import type { OpenSearchConfig } from "./OpenSearchConfig.ts"
import { type StoreSettings, storeSettingsOf } from "./StoreConfig.ts"

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
  /** On SIGTERM: how long requests in flight may take before the process exits (streams are ended with an error event just before). */
  readonly shutdownGraceSeconds: number
  readonly logRequests: boolean
  readonly search: {
    readonly backend: "engine" | "fixture" | "opensearch"
    /** Snapshot path or URL; undefined means <dataDir>/index.snapshot. */
    readonly snapshot: string | undefined
    readonly documents: string | undefined
    /** Warm-up queries after the snapshot is opened, in ms (core/index/WarmUp.ts); undefined: the adapter's default. */
    readonly warmUpMs: number | undefined
    /** The opensearch backend's cluster and index (credentials are environment variable names). */
    readonly opensearch?: OpenSearchConfig | undefined
    /** The engine's query expansion (`expand: true`): its depths and weights as configured. */
    readonly expansion?: ExpansionConfig | undefined
  }
  readonly configFile: string | undefined
  /** Shared state: memory, or Redis (PERISCOPE_REDIS_URL / store.redisUrl, kept Redacted). */
  readonly store: StoreSettings
  /** /metrics and OTLP traces (OTEL_EXPORTER_OTLP_ENDPOINT / observability.otlpEndpoint). */
  readonly observability: ObservabilitySettings
  /** The parsed config file, for the parts other modules read (chat routing). */
  readonly file: ConfigFile
}

/** Why a file could not be read, as the operator knows it: the OS error code (ENOENT) when there is one. */
export const describeReadError = (error: PlatformError.PlatformError): string => {
  const reason = error.reason
  if (reason._tag === "BadArgument") return `cannot be read: ${reason.description ?? "bad argument"}`
  const cause = reason.cause as { readonly code?: unknown } | undefined
  return `cannot be read: ${typeof cause?.code === "string" ? cause.code : reason._tag}`
}

/** Reads a text file through the platform's FileSystem; fails with the setting that named it. */
export const readSettingFile = (path: string, setting: string): Effect.Effect<string, SettingsError, FileSystem.FileSystem> =>
  Effect.flatMap(Effect.service(FileSystem.FileSystem), (fs) =>
    Effect.mapError(fs.readFileString(path), (error) => new SettingsError({ setting: `${setting} (${path})`, message: describeReadError(error) })))

const optionalEnv = (name: string) =>
  Config.String(name).pipe(Config.option, Config.map((o) => (o._tag === "Some" && o.value.trim() !== "" ? o.value.trim() : undefined)))

const fromConfigError = (error: { readonly message: string }) => {
  const [first, where] = error.message.split("\n")
  const setting = where?.match(/at \["([^"]+)"\]/)?.[1] ?? "configuration"
  return new SettingsError({ setting, message: (first ?? error.message).replace(/^SchemaError\(/, "").replace(/^Expected /, "must be ") })
}

/** Reads a JSON file and decodes it; errors name the setting that pointed at the file. */
export const readJsonFile = <A>(
  path: string,
  setting: string,
  decode: (input: unknown) => Result.Result<A, InvalidInput>
): Effect.Effect<A, SettingsError, FileSystem.FileSystem> =>
  Effect.flatMap(readSettingFile(path, setting), (text) => {
    const decoded = decodeJsonText(text, "file", decode)
    return Result.isSuccess(decoded)
      ? Effect.succeed(decoded.success)
      : Effect.fail(new SettingsError({ setting: `${setting} (${path})`, message: decoded.failure.message }))
  })

const decodeConfigFile = decoderFor(ConfigFile, "file", { unknownKeys: "error" })

export const loadSettings: Effect.Effect<Settings, SettingsError, FileSystem.FileSystem> =
  Effect.gen(function*() {
    const env = yield* Config.all({
      port: Config.Port("PORT").pipe(Config.option),
      host: optionalEnv("PERISCOPE_HOST"),
      apiKeys: optionalEnv("PERISCOPE_API_KEYS"),
      keysFile: optionalEnv("PERISCOPE_KEYS_FILE"),
      dataDir: optionalEnv("PERISCOPE_DATA_DIR"),
      configFile: optionalEnv("PERISCOPE_CONFIG"),
      redisUrl: optionalEnv("PERISCOPE_REDIS_URL"),
      otlpEndpoint: optionalEnv("OTEL_EXPORTER_OTLP_ENDPOINT"),
      serviceName: optionalEnv("OTEL_SERVICE_NAME")
    }).pipe(Effect.mapError(fromConfigError))
    const file: ConfigFile = env.configFile === undefined
      ? {}
      : yield* readJsonFile(env.configFile, "PERISCOPE_CONFIG", decodeConfigFile)
    const apiKeys = env.apiKeys === undefined ? [] : env.apiKeys.split(",").map((k) => k.trim()).filter((k) => k !== "")
    if (env.apiKeys !== undefined && apiKeys.length === 0) {
      return yield* new SettingsError({ setting: "PERISCOPE_API_KEYS", message: "must list at least one key (comma-separated)" })
    }
    if (env.otlpEndpoint !== undefined && !/^https?:\/\/[^\s/]+/i.test(env.otlpEndpoint)) {
      return yield* new SettingsError({ setting: "OTEL_EXPORTER_OTLP_ENDPOINT", message: "must be an http(s) URL" })
    }
    return settingsOf(file, {
      ...(env.port._tag === "Some" ? { port: env.port.value } : {}),
      ...(env.host === undefined ? {} : { host: env.host }),
      ...(env.dataDir === undefined ? {} : { dataDir: env.dataDir }),
      ...(env.keysFile === undefined ? {} : { keysFile: env.keysFile }),
      ...(env.configFile === undefined ? {} : { configFile: env.configFile }),
      ...(env.redisUrl === undefined ? {} : { redisUrl: env.redisUrl }),
      ...(env.otlpEndpoint === undefined ? {} : { otlpEndpoint: env.otlpEndpoint }),
      ...(env.serviceName === undefined ? {} : { serviceName: env.serviceName }),
      apiKeys
    })
  })

/** Settings from a config file, with what the environment gave winning over it; defaults for the rest. */
export const settingsOf = (
  file: ConfigFile,
  env: Partial<Pick<Settings, "port" | "host" | "dataDir" | "keysFile" | "configFile" | "apiKeys">> & {
    readonly redisUrl?: string
    readonly otlpEndpoint?: string
    readonly serviceName?: string
  } = {}
): Settings => ({
  port: env.port ?? file.port ?? 8080,
  host: env.host ?? file.host,
  dataDir: env.dataDir ?? file.dataDir ?? ".periscope",
  apiKeys: env.apiKeys ?? [],
  keysFile: env.keysFile ?? file.keysFile,
  rateLimitPerMinute: file.rateLimitPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE,
  streamKeepAliveSeconds: file.streamKeepAliveSeconds ?? 15,
  shutdownGraceSeconds: file.shutdownGraceSeconds ?? 10,
  logRequests: file.logRequests ?? false,
  search: {
    backend: file.search?.backend ?? "engine",
    snapshot: file.search?.snapshot,
    documents: file.search?.documents,
    warmUpMs: file.search?.warmUpMs,
    opensearch: file.search?.opensearch,
    expansion: file.search?.expansion
  },
  configFile: env.configFile,
  store: storeSettingsOf(file.store, env.redisUrl),
  observability: observabilitySettingsOf(file.observability, env),
  file
})
