/**
 * Gunzips bytes with the web-standard DecompressionStream (Node and Deno alike),
 * stopping once the output passes a limit, so a small bomb cannot fill memory.
 */
import { Effect } from "effect"
import { joinChunks } from "./ByteChunks.ts"

export const isGzip = (bytes: Uint8Array): boolean => bytes[0] === 0x1f && bytes[1] === 0x8b

/** The decompressed bytes, or a message saying why not. */
export const gunzipLimited = (bytes: Uint8Array, maxBytes: number): Effect.Effect<Uint8Array, string> =>
  Effect.tryPromise({
    try: async (signal) => {
      const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("gzip"))
      const reader = stream.getReader()
      signal.addEventListener("abort", () => void reader.cancel().catch(() => {}))
      const chunks: Array<Uint8Array> = []
      let size = 0
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        size += value.byteLength
        if (size > maxBytes) {
          await reader.cancel().catch(() => {})
          throw new Error(`larger than ${maxBytes} bytes once decompressed`)
        }
        chunks.push(value)
      }
      return joinChunks(chunks, size)
    },
    catch: (error) => `bad gzip (${error instanceof Error ? error.message : String(error)})`
  })
