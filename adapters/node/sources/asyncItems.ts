/**
 * File sources read with Node's async iterators (fs streams, readline, warcio)
 * become the core's streams here. Interrupting the stream returns the
 * iterator, which closes the file.
 */
import { Effect, Stream } from "effect"
import { type DocumentSource, SourceError, type SourceItem } from "../../../core/ingest/DocumentSource.ts"

export const asyncItems = (origin: string, items: () => AsyncIterable<SourceItem>): DocumentSource["items"] =>
  Stream.suspend(() =>
    Stream.fromAsyncIterable(items(), (error) =>
      new SourceError({ origin, message: error instanceof Error ? error.message : String(error) }))
  )

/** An estimate that is simply unknown when counting fails. */
export const asyncEstimate = (count: () => Promise<number | undefined>): Effect.Effect<number | undefined> =>
  Effect.promise(() => count().catch(() => undefined))
