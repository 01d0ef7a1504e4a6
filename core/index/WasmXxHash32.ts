/**
 * xxHash32 compiled to WebAssembly (the xxhash-wasm package): the same values as
 * XxHash32.ts, faster, and the checksum is most of the time it takes to open a
 * million-passage snapshot (test/bench/scale.ts). Compiling it is asynchronous, so
 * it is loaded once, the first time a snapshot is read; a runtime without WebAssembly
 * gets the plain-JS maker.
 */
import { Effect } from "effect"
import xxhash from "xxhash-wasm"
import { jsXxHash32, type XxHash32Maker } from "./XxHash32.ts"

let loading: Promise<XxHash32Maker> | undefined

const load = (): Promise<XxHash32Maker> =>
  (loading ??= typeof WebAssembly === "undefined"
    ? Promise.resolve(jsXxHash32)
    : xxhash().then(({ create32 }): XxHash32Maker => (seed) => create32(seed), () => jsXxHash32))

/** The fastest xxHash32 maker this runtime has. */
export const fastXxHash32: Effect.Effect<XxHash32Maker> = Effect.promise(load)
