/**
 * The key store of the Node server. Keys come from PERISCOPE_API_KEYS (plain,
 * hashed at once) and/or a keys file of SHA-256 hashes. With neither, the
 * first start makes a key, prints it once and keeps only its hash in
 * <dataDir>/keys.json: secure by default.
 */
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import { decoderFor } from "../../core/schema/Decode.ts"
import { readJsonFile } from "../../core/config/Settings.ts"
import { generateKey, hashKey, type KeyRecord, KeysFile, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { readText, SettingsError, type Settings } from "./settings.ts"

const decodeKeysFile = decoderFor(KeysFile, "file")

export const readKeysFile = (path: string, setting: string): Effect.Effect<ReadonlyArray<KeyRecord>, SettingsError> =>
  Effect.map(readJsonFile(readText, path, setting, decodeKeysFile), (file) => file.keys)

/** Writes via a temporary file and rename, readable by the owner only. */
const writePrivateFile = (path: string, content: string) => {
  mkdirSync(dirname(path), { recursive: true })
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, content, { mode: 0o600 })
  chmodSync(tmp, 0o600)
  renameSync(tmp, path)
}

export interface KeySetup {
  readonly records: ReadonlyArray<KeyRecord>
  /** A key made at this start; shown once to the operator, never stored in plain. */
  readonly generatedKey: string | undefined
  readonly generatedFile: string | undefined
}

export const setupKeys = (settings: Settings): Effect.Effect<KeySetup, SettingsError> =>
  Effect.gen(function*() {
    const records: Array<KeyRecord> = recordsFromPlainKeys(settings.apiKeys, settings.rateLimitPerMinute)
    if (settings.keysFile !== undefined) records.push(...(yield* readKeysFile(settings.keysFile, "PERISCOPE_KEYS_FILE")))
    if (records.length > 0) return { records, generatedKey: undefined, generatedFile: undefined }

    const generatedFile = join(settings.dataDir, "keys.json")
    if (existsSync(generatedFile)) {
      return { records: yield* readKeysFile(generatedFile, "generated keys file"), generatedKey: undefined, generatedFile }
    }
    const key = generateKey()
    const record: KeyRecord = { name: "generated", sha256: hashKey(key), requestsPerMinute: settings.rateLimitPerMinute }
    yield* Effect.try({
      try: () => writePrivateFile(generatedFile, JSON.stringify({ keys: [record] }, null, 2) + "\n"),
      catch: (e) => new SettingsError({ setting: "PERISCOPE_DATA_DIR", message: `cannot write ${generatedFile}: ${(e as NodeJS.ErrnoException).code ?? String(e)}` })
    })
    return { records: [record], generatedKey: key, generatedFile }
  })
