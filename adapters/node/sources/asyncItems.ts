/**
 * File sources read with Node's async iterators (fs streams, readline, warcio)
 * become the core's streams here. Interrupting the stream returns the
 * iterator, which closes the file.
 */
import { Effect, Stream } from "effect"
import { type DocumentSource, type PageItem, SourceError, type SourceItem } from "../../../core/ingest/DocumentSource.ts"
import { extractRawPage } from "../../../core/ingest/RawPage.ts"

export const asyncItems = <A extends SourceItem | PageItem = SourceItem>(
  origin: string,
  items: () => AsyncIterable<A>
): Stream.Stream<A, SourceError> =>
  Stream.suspend(() =>
    Stream.fromAsyncIterable(items(), (error) =>
      new SourceError({ origin, message: error instanceof Error ? error.message : String(error) }))
  )

/** A source's items from its raw pages, each page extracted in place (one thread, in order). */
export const extractedInPlace = (pages: NonNullable<DocumentSource["pages"]>): DocumentSource["items"] =>
  Stream.map(pages, (item) => item._tag === "Page" ? extractRawPage(item.origin, item.page) : item)

/** An estimate that is simply unknown when counting fails. */
export const asyncEstimate = (count: () => Promise<number | undefined>): Effect.Effect<number | undefined> =>
  Effect.promise(() => count().catch(() => undefined))
