/**
 * The key records a server checks bearer keys against, from one place:
 * plain keys from PERISCOPE_API_KEYS (hashed at once), a keys file of hashes,
 * and, when neither is configured, what the runtime can do about it:
 * "persist" makes a key and keeps its hash in <dataDir>/keys.json (Node),
 * "memory" makes one for this process only (embed), "refuse" fails (Deno Deploy,
 * which has no data directory).
 */
import { Effect, FileSystem } from "effect"
import { generateKey, hashKey, type KeyRecord, KeysFile, recordsFromPlainKeys } from "../auth/KeyRecord.ts"
import { readJsonFile, type Settings, SettingsError } from "../config/Settings.ts"
import { decoderFor } from "../schema/Decode.ts"

export interface KeySetup {
  readonly records: ReadonlyArray<KeyRecord>
  /** A key made at this start: shown once to the operator, never stored in plain. */
  readonly generatedKey: string | undefined
  /** Where the generated key's hash is kept, when it is. */
  readonly generatedFile: string | undefined
}

export type WhenNoKey = "persist" | "memory" | "refuse"

const decodeKeysFile = decoderFor(KeysFile, "file", { unknownKeys: "error" })

const readKeysFile = (path: string, setting: string) =>
  Effect.map(readJsonFile(path, setting, decodeKeysFile), (file) => file.keys)

/**
 * Creates `path` whole and readable by the owner only, unless it exists: written to a temporary
 * file, then linked to its name (a link never replaces a file), so a keys file made meanwhile
 * (by `periscope keys create` or a second server) is kept. False when it existed.
 */
const createPrivateFile = Effect.fnUntraced(function*(path: string, content: string) {
  const fs = yield* FileSystem.FileSystem
  const dir = path.slice(0, Math.max(0, path.lastIndexOf("/")))
  if (dir !== "") yield* fs.makeDirectory(dir, { recursive: true })
  const tmp = `${path}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`
  return yield* Effect.gen(function*() {
    yield* fs.writeFileString(tmp, content, { mode: 0o600 })
    yield* fs.chmod(tmp, 0o600)
    return yield* fs.link(tmp, path).pipe(
      Effect.as(true),
      Effect.catchIf((error) => error.reason._tag === "AlreadyExists", () => Effect.succeed(false))
    )
  }).pipe(Effect.ensuring(Effect.ignore(fs.remove(tmp, { force: true }))))
})

/**
 * Runs a change of the keys file at `file` holding the lock that `periscope keys` changes take too
 * (the Node adapter's file lock), so a key made at start and one made by the command both land.
 */
export type KeysFileLock = <A, E, R>(file: string, change: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SettingsError, R>

const unlocked: KeysFileLock = (_file, change) => change

export const setupKeys = Effect.fn("KeySetup.setupKeys")(function*(
  settings: Settings,
  whenNone: WhenNoKey,
  extra: ReadonlyArray<KeyRecord> = [],
  lock: KeysFileLock = unlocked
): Effect.fn.Return<KeySetup, SettingsError, FileSystem.FileSystem> {
  const records: Array<KeyRecord> = [...recordsFromPlainKeys(settings.apiKeys, settings.rateLimitPerMinute), ...extra]
  if (settings.keysFile !== undefined) records.push(...(yield* readKeysFile(settings.keysFile, "PERISCOPE_KEYS_FILE")))
  if (records.length > 0) return { records, generatedKey: undefined, generatedFile: undefined }

  if (whenNone === "refuse") {
    return yield* new SettingsError({
      setting: "PERISCOPE_API_KEYS",
      message: "is required here (or PERISCOPE_KEYS_FILE): there is no data directory to keep a generated key in"
    })
  }
  const key = generateKey()
  const record: KeyRecord = { name: "generated", sha256: hashKey(key), requestsPerMinute: settings.rateLimitPerMinute }
  if (whenNone === "memory") return { records: [record], generatedKey: key, generatedFile: undefined }

  const fs = yield* FileSystem.FileSystem
  const file = `${settings.dataDir}/keys.json`
  const existing: KeySetup = { records: [], generatedKey: undefined, generatedFile: file }
  const created = yield* lock(file, Effect.gen(function*() {
    if (yield* Effect.orElseSucceed(fs.exists(file), () => false)) return false
    return yield* Effect.mapError(
      createPrivateFile(file, JSON.stringify({ keys: [record] }, null, 2) + "\n"),
      (error) => new SettingsError({ setting: "PERISCOPE_DATA_DIR", message: `cannot write ${file}: ${error.message}` })
    )
  }))
  if (!created) return { ...existing, records: yield* readKeysFile(file, "generated keys file") }
  return { records: [record], generatedKey: key, generatedFile: file }
})
