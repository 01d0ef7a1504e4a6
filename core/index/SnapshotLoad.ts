/**
 * Snapshot reading as an Effect, the checksum checked with the fastest xxHash32 this runtime
 * has (WasmXxHash32.ts); `onError` turns what the reading throws into the caller's error.
 */
import { Effect } from "effect"
import type { SearchIndex } from "./SearchIndex.ts"
import { decodeSnapshot } from "./Snapshot.ts"
import { fastXxHash32 } from "./WasmXxHash32.ts"
import type { XxHash32Maker } from "./XxHash32.ts"

/** Runs `read` (a decodeSnapshot or openSnapshot call) with the fast hasher. */
export const withFastChecksum = <A, E>(read: (hashWith: XxHash32Maker) => A, onError: (error: unknown) => E): Effect.Effect<A, E> =>
  Effect.flatMap(fastXxHash32, (hashWith) =>
    Effect.try({
      try: () => read(hashWith),
      catch: onError
    }))

/** Snapshot bytes to a SearchIndex. */
export const decodeSnapshotFast = <E>(bytes: Uint8Array, onError: (error: unknown) => E): Effect.Effect<SearchIndex, E> =>
  withFastChecksum((hashWith) => decodeSnapshot(bytes, hashWith), onError)
