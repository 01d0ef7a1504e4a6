/**
 * How keys are configured: a name, the SHA-256 of the key (never the key),
 * and a per-key rate limit. A keys file holds `{ "keys": [KeyRecord, ...] }`.
 */
import { Effect, Schema } from "effect"
import { Base64Url } from "effect/encoding"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"

/** 1,000 requests per minute per key: the limit the hosted service of this search API publishes. */
export const DEFAULT_REQUESTS_PER_MINUTE = 1000

export const KeyRecord = Schema.Struct({
  name: Schema.String.annotate({ message: "must be a non-empty string" }).check(Schema.isMinLength(1, { message: "must be a non-empty string" })),
  sha256: Schema.String.annotate({ message: "must be 64 lowercase hex digits (the SHA-256 of the key)" }).check(
    Schema.isPattern(/^[0-9a-f]{64}$/, { message: "must be 64 lowercase hex digits (the SHA-256 of the key)" })
  ),
  requestsPerMinute: Schema.Number.annotate({ message: "must be an integer >= 1" }).check(
    Schema.isInt({ message: "must be an integer >= 1" }),
    Schema.isGreaterThanOrEqualTo(1, { message: "must be an integer >= 1" })
  ).pipe(Schema.withDecodingDefaultKey(Effect.succeed(DEFAULT_REQUESTS_PER_MINUTE)))
})
export type KeyRecord = typeof KeyRecord.Type

export const KeysFile = Schema.Struct({
  keys: Schema.Array(KeyRecord).check(
    Schema.makeFilter((keys: ReadonlyArray<KeyRecord>) => {
      const names = new Set<string>()
      for (let i = 0; i < keys.length; i++) {
        if (names.has(keys[i]!.name)) return { path: [i, "name"], issue: "duplicates another key's name" }
        names.add(keys[i]!.name)
      }
      return undefined
    })
  )
})
export type KeysFile = typeof KeysFile.Type

const encoder = new TextEncoder()

/** SHA-256 of a key as 64 lowercase hex digits. */
export const hashKey = (key: string): string => bytesToHex(sha256(encoder.encode(key)))

/** Records for plain keys given in configuration (PERISCOPE_API_KEYS): hashed at once, never kept. */
export const recordsFromPlainKeys = (keys: ReadonlyArray<string>, requestsPerMinute = DEFAULT_REQUESTS_PER_MINUTE): Array<KeyRecord> =>
  keys.map((key, i) => ({ name: `env-${i + 1}`, sha256: hashKey(key), requestsPerMinute }))

/** A new random key: 32 bytes from the platform CSPRNG, base64url, with a recognisable prefix. */
export const generateKey = (): string => {
  const bytes = new Uint8Array(32)
  crypto.getRandomValues(bytes)
  return "psk_" + Base64Url.encode(bytes)
}
