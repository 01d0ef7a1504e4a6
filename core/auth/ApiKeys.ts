/**
 * Checks bearer keys against the configured SHA-256 hashes in constant time:
 * the presented key is hashed and compared with every record, without early
 * exit, so timing says nothing about which record (or byte) matched.
 */
import { Context, Effect, Layer } from "effect"
import { sha256 } from "@noble/hashes/sha2.js"
import { hexToBytes } from "@noble/hashes/utils.js"
import { AuthError, type Principal } from "./AuthError.ts"
import type { KeyRecord } from "./KeyRecord.ts"

const encoder = new TextEncoder()

/** Keys longer than this are refused before hashing: no key we issue comes close. */
const MAX_KEY_LENGTH = 512

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
  return (key: string): Effect.Effect<Principal, AuthError> => {
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
    return match === -1 ? Effect.fail(invalidKey) : Effect.succeed(principals[match]!)
  }
}
