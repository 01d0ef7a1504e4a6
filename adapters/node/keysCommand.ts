/**
 * `periscope keys create|list|revoke`: the keys file a server checks bearer
 * keys against (core/auth/KeyRecord), kept by hand without `sha256sum`. The
 * file is PERISCOPE_KEYS_FILE (or `keysFile` in the config), else
 * <dataDir>/keys.json, the file a server reads when no key is configured.
 * A new key is printed once, on stdout alone (so `KEY=$(periscope keys create ci)`
 * works); only its SHA-256 is written, through a temporary file and a rename,
 * readable by the owner only. A change holds the file's lock (fileLock.ts) from
 * its read to its rename, so concurrent creates and revokes all land.
 */
import { Console, Effect, FileSystem, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { DEFAULT_REQUESTS_PER_MINUTE, generateKey, hashKey, type KeyRecord, KeysFile } from "../../core/auth/KeyRecord.ts"
import { readJsonFile } from "../../core/config/Settings.ts"
import { decoderFor } from "../../core/schema/Decode.ts"
import { KEYS_LOCK_WAIT_MS, withFileLock } from "./fileLock.ts"
import { loadSettings, type Settings } from "./settings.ts"

export class KeysError extends Schema.TaggedError<KeysError>()("KeysError", {
  reason: Schema.Literals(["NotFound", "Duplicate", "Invalid", "Unwritable"]),
  /** The file or key name the message is about. */
  subject: Schema.String,
  message: Schema.String
}) {}

/** The id `list` shows: the first 12 hex digits of the key's SHA-256 (never the key). */
export const keyId = (record: KeyRecord): string => record.sha256.slice(0, 12)

const decodeKeysFile = decoderFor(KeysFile, "file", { unknownKeys: "error" })

/** Where the server looks for hashed keys: the configured keys file, else the data directory's. */
export const keysFileOf = (settings: Settings): string => settings.keysFile ?? `${settings.dataDir}/keys.json`

const readRecords = Effect.fnUntraced(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  if (!(yield* Effect.orElseSucceed(fs.exists(file), () => false))) return [] as ReadonlyArray<KeyRecord>
  return (yield* readJsonFile(file, "keys file", decodeKeysFile)).keys
})

const writeRecords = Effect.fnUntraced(function*(file: string, keys: ReadonlyArray<KeyRecord>) {
  const fs = yield* FileSystem.FileSystem
  const dir = file.slice(0, Math.max(0, file.lastIndexOf("/")))
  const tmp = `${file}.${process.pid}.tmp`
  yield* Effect.mapError(
    Effect.gen(function*() {
      if (dir !== "") yield* fs.makeDirectory(dir, { recursive: true })
      yield* fs.writeFileString(tmp, JSON.stringify({ keys }, null, 2) + "\n", { mode: 0o600 })
      yield* fs.chmod(tmp, 0o600)
      yield* fs.rename(tmp, file)
    }),
    (error) => new KeysError({ reason: "Unwritable", subject: file, message: `cannot be written: ${error.message}` })
  )
})

/** Read, change and write the keys file holding its lock, so concurrent changes all land. */
const lockedKeys = <A, E, R>(file: string, purpose: string, change: Effect.Effect<A, E, R>) =>
  withFileLock(file, { purpose, waitMs: KEYS_LOCK_WAIT_MS }, change)

const settingsWith = (file: Option.Option<string>) =>
  Effect.map(loadSettings, (settings) => ({ settings, file: Option.getOrElse(file, () => keysFileOf(settings)) }))

const fileFlag = Flag.String("file").pipe(
  Flag.withDescription("Keys file (default: PERISCOPE_KEYS_FILE, else keys.json in PERISCOPE_DATA_DIR, ./.periscope)"),
  Flag.optional
)

const nextName = (keys: ReadonlyArray<KeyRecord>) => {
  let n = keys.length + 1
  while (keys.some((k) => k.name === `key-${n}`)) n++
  return `key-${n}`
}

const create = Command.make(
  "create",
  {
    name: Argument.String("name").pipe(Argument.withDescription("A name for the key, unique in the file (default key-<n>)"), Argument.optional),
    requestsPerMinute: Flag.Int("requests-per-minute").pipe(
      Flag.withDescription(`Rate limit of this key (default ${DEFAULT_REQUESTS_PER_MINUTE})`),
      Flag.optional
    ),
    file: fileFlag
  },
  Effect.fn("periscope.keys.create")(function*(input) {
    const { settings, file } = yield* settingsWith(input.file)
    const limit = Option.getOrElse(input.requestsPerMinute, () => settings.rateLimitPerMinute)
    if (!Number.isInteger(limit) || limit < 1) {
      return yield* new KeysError({ reason: "Invalid", subject: "--requests-per-minute", message: `must be an integer >= 1, got ${limit}` })
    }
    const key = generateKey()
    const { name, record } = yield* lockedKeys(file, "periscope keys create", Effect.gen(function*() {
      const keys = yield* readRecords(file)
      const name = Option.getOrElse(input.name, () => nextName(keys)).trim()
      if (name === "") return yield* new KeysError({ reason: "Invalid", subject: "name", message: "must be a non-empty string" })
      if (keys.some((k) => k.name === name)) {
        return yield* new KeysError({ reason: "Duplicate", subject: name, message: `a key with this name is already in ${file}; revoke it first or choose another name` })
      }
      const record: KeyRecord = { name, sha256: hashKey(key), requestsPerMinute: limit }
      yield* writeRecords(file, [...keys, record])
      return { name, record }
    }))
    // The key alone on stdout, once; everything else on stderr.
    yield* Console.log(key)
    yield* Console.error(
      `Created key "${name}" (id ${keyId(record)}, ${limit} requests/minute) in ${file}.\n` +
        `It is shown only now: only its SHA-256 is kept. Send it as "Authorization: Bearer <key>"; restart the server to accept it.`
    )
    if (settings.keysFile === undefined && settings.apiKeys.length > 0) {
      yield* Console.error(`Note: PERISCOPE_API_KEYS is set, so the server reads no keys file; set PERISCOPE_KEYS_FILE=${file} to use this one.`)
    }
  })
).pipe(Command.withDescription("Make a new API key: prints it once, stores only its SHA-256"))

const list = Command.make(
  "list",
  { file: fileFlag },
  Effect.fn("periscope.keys.list")(function*(input) {
    const { file } = yield* settingsWith(input.file)
    const keys = yield* readRecords(file)
    if (keys.length === 0) return yield* Console.error(`No keys in ${file}; make one with: periscope keys create <name>`)
    const width = Math.max(4, ...keys.map((k) => k.name.length))
    yield* Console.log(`${"NAME".padEnd(width)}  ID            REQUESTS/MIN`)
    for (const k of keys) yield* Console.log(`${k.name.padEnd(width)}  ${keyId(k)}  ${k.requestsPerMinute}`)
  })
).pipe(Command.withDescription("List the keys in the keys file: names, ids and rate limits (never keys)"))

const revoke = Command.make(
  "revoke",
  {
    name: Argument.String("name").pipe(Argument.withDescription("Name (or id, from `keys list`) of the key to remove")),
    file: fileFlag
  },
  Effect.fn("periscope.keys.revoke")(function*(input) {
    const { file } = yield* settingsWith(input.file)
    const gone = yield* lockedKeys(file, "periscope keys revoke", Effect.gen(function*() {
      const keys = yield* readRecords(file)
      const gone = keys.filter((k) => k.name === input.name || keyId(k) === input.name)
      if (gone.length !== 1) {
        return yield* new KeysError({
          reason: "NotFound",
          subject: input.name,
          message: `no key with this name or id in ${file}` + (keys.length === 0 ? "" : ` (names: ${keys.map((k) => k.name).join(", ")})`)
        })
      }
      yield* writeRecords(file, keys.filter((k) => k !== gone[0]))
      return gone[0]!
    }))
    yield* Console.error(`Revoked key "${gone.name}" (id ${keyId(gone)}) in ${file}; restart the server to refuse it.`)
  })
).pipe(Command.withDescription("Remove a key from the keys file"))

export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("Manage API keys in the keys file (hashed; a new key is shown once)"),
  Command.withSubcommands([create, list, revoke])
)
