/**
 * Checks bearer keys against the configured SHA-256 hashes in constant time:
 * the presented key is hashed and compared with every record, without early
 * exit, so timing says nothing about which record (or byte) matched.
 * A key that matched is remembered (up to VERIFIED_LIMIT of them), so a client
 * pays the hash once, not per request (a hash per request shows in the
 * server's CPU per request: test/bench/http.ts); only matched keys are kept,
 * so unknown keys cannot grow the table.
 */
import { Context, Effect, Layer } from "effect"
import { sha256 } from "@noble/hashes/sha2.js"
import { hexToBytes } from "@noble/hashes/utils.js"
import { AuthError, type Principal } from "./AuthError.ts"
import type { KeyRecord } from "./KeyRecord.ts"

const encoder = new TextEncoder()

/** Keys longer than this are refused before hashing: no key we issue comes close. */
const MAX_KEY_LENGTH = 512

/** Matched keys remembered per authenticator; past this the table starts over (a deployment has a handful of keys). */
const VERIFIED_LIMIT = 4096

const missingKey = new AuthError({
  reason: "missing_key",
  message: "Authorization: missing API key; send the header \"Authorization: Bearer <API_KEY>\""
})
const invalidKey = new AuthError({ reason: "invalid_key", message: "Authorization: invalid API key" })

export class ApiKeys extends Context.Service<ApiKeys, {
  authenticate(key: string): Effect.Effect<Principal, AuthError>
}>()("periscope/auth/ApiKeys") {
  static readonly layer = (records: ReadonlyArray<KeyRecord>) =>
    Layer.succeed(ApiKeys, ApiKeys.of({ authenticate: makeAuthenticator(records) }))
}

/** The pure check behind the service, exported for the embed library and tests. */
export const makeAuthenticator = (records: ReadonlyArray<KeyRecord>) => {
  const hashes = records.map((r) => hexToBytes(r.sha256))
  const principals: Array<Principal> = records.map((r) => ({ keyName: r.name, requestsPerMinute: r.requestsPerMinute }))
  const verified = new Map<string, Effect.Effect<Principal>>()
  return (key: string): Effect.Effect<Principal, AuthError> => {
    const known = verified.get(key)
    if (known !== undefined) return known
    if (key === "") return Effect.fail(missingKey)
    if (key.length > MAX_KEY_LENGTH) return Effect.fail(invalidKey)
    const digest = sha256(encoder.encode(key))
    let match = -1
    for (let r = 0; r < hashes.length; r++) {
      const expected = hashes[r]!
      let diff = 0
      for (let i = 0; i < 32; i++) diff |= digest[i]! ^ expected[i]!
      // Branch-free select: match becomes r when diff is 0, stays otherwise.
      const isEqual = ((diff - 1) >>> 31) & 1
      match = isEqual ? r : match
    }
    if (match === -1) return Effect.fail(invalidKey)
    const found = Effect.succeed(principals[match]!)
    if (verified.size >= VERIFIED_LIMIT) verified.clear()
    verified.set(key, found)
    return found
  }
}
