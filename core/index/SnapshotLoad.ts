/**
 * Snapshot bytes to a SearchIndex as an Effect, the checksum checked with the fastest xxHash32
 * this runtime has (WasmXxHash32.ts); `onError` turns what decodeSnapshot throws into the
 * caller's error.
 */
import { Effect } from "effect"
import type { SearchIndex } from "./SearchIndex.ts"
import { decodeSnapshot } from "./Snapshot.ts"
import { fastXxHash32 } from "./WasmXxHash32.ts"

export const decodeSnapshotFast = <E>(bytes: Uint8Array, onError: (error: unknown) => E): Effect.Effect<SearchIndex, E> =>
  Effect.flatMap(fastXxHash32, (hashWith) =>
    Effect.try({
      try: () => decodeSnapshot(bytes, hashWith),
      catch: onError
    }))
