/**
 * The `store` section of the config file: where shared state lives. Without a
 * Redis URL every instance keeps its own limits and caches in memory; with one,
 * every instance sharing the URL and prefix shares them. The URL may hold a
 * password, so it is kept Redacted from the moment it is read and no message
 * ever repeats it.
 */
import { Redacted, Result, Schema } from "effect"
import { ruledNumber, ruledString } from "../schema/Rules.ts"

const optionalKey = Schema.optionalKey
const prefixRule = "must be 1 to 64 letters, digits or _ : . -"

export const StoreConfig = Schema.Struct({
  /** redis://[user:password@]host:port[/db] or rediss://; PERISCOPE_REDIS_URL wins. Checked after decoding, so a bad one is never echoed. */
  redisUrl: optionalKey(ruledString("must be a string")),
  /** Prefix of every key Periscope writes. Default "periscope:". */
  keyPrefix: optionalKey(ruledString(prefixRule).check(Schema.isPattern(/^[A-Za-z0-9_:.-]{1,64}$/, { message: prefixRule }))),
  /** What rate limits do while Redis cannot be reached: "open" (default) or "closed". */
  onRedisDown: optionalKey(Schema.Literals(["open", "closed"]).annotate({ message: "must be \"open\" or \"closed\"" })),
  /** How long one Redis command may take before it counts as a failure. Default 250. */
  commandTimeoutMs: optionalKey(ruledNumber("must be an integer from 1 to 10000", { integer: true, min: 1, max: 10_000 }))
}).annotate({ message: "must be an object {redisUrl?, keyPrefix?, onRedisDown?, commandTimeoutMs?}" })
export type StoreConfig = typeof StoreConfig.Type

export interface StoreSettings {
  /** Undefined: in memory, per instance. */
  readonly redisUrl: Redacted.Redacted<string> | undefined
  /** Which setting gave the URL, for messages ("PERISCOPE_REDIS_URL" or "store.redisUrl"). */
  readonly redisUrlSetting: string
  readonly keyPrefix: string
  readonly onRedisDown: "open" | "closed"
  readonly commandTimeoutMs: number
}

export const defaultStoreSettings: StoreSettings = {
  redisUrl: undefined,
  redisUrlSetting: "store.redisUrl",
  keyPrefix: "periscope:",
  onRedisDown: "open",
  commandTimeoutMs: 250
}

/** The store settings from the file's section and the environment's URL (which wins). */
export const storeSettingsOf = (file: StoreConfig | undefined, envUrl: string | undefined): StoreSettings => {
  const url = envUrl ?? file?.redisUrl
  return {
    redisUrl: url === undefined || url.trim() === "" ? undefined : Redacted.make(url.trim()),
    redisUrlSetting: envUrl !== undefined ? "PERISCOPE_REDIS_URL" : "store.redisUrl",
    keyPrefix: file?.keyPrefix ?? defaultStoreSettings.keyPrefix,
    onRedisDown: file?.onRedisDown ?? defaultStoreSettings.onRedisDown,
    commandTimeoutMs: file?.commandTimeoutMs ?? defaultStoreSettings.commandTimeoutMs
  }
}

/** The URL's parts a client needs, or the rule it breaks (never the URL itself: it may hold a password). */
export const checkRedisUrl = (url: Redacted.Redacted<string>): Result.Result<URL, string> => {
  let parsed: URL
  try {
    parsed = new URL(Redacted.value(url))
  } catch {
    return Result.fail("must be a redis:// or rediss:// URL (the value is not shown: it may hold a password)")
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    return Result.fail("must be a redis:// or rediss:// URL (the value is not shown: it may hold a password)")
  }
  if (parsed.hostname === "") return Result.fail("must name a host (the value is not shown: it may hold a password)")
  return Result.succeed(parsed)
}

/** The URL with any password replaced, for a log line that says where shared state lives. */
export const describeRedisUrl = (url: Redacted.Redacted<string>): string => {
  const checked = checkRedisUrl(url)
  if (Result.isFailure(checked)) return "(invalid URL)"
  const u = checked.success
  return `${u.protocol}//${u.username !== "" || u.password !== "" ? "***@" : ""}${u.host}${u.pathname === "/" ? "" : u.pathname}`
}
