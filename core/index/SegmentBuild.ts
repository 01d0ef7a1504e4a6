/**
 * The segment of pages added to a running index (SegmentedIndex.ts), built as a snapshot's own
 * index is, with the snapshot's options. `segmentSnapshotJob` is the form a job thread runs
 * (core/jobs): plain data in, snapshot bytes out, moved back rather than copied.
 */
import { defineJob } from "../jobs/Job.ts"
import type { IndexDocument } from "./Document.ts"
import type { EngineOptions } from "./EngineOptions.ts"
import { IndexBuilder } from "./IndexBuilder.ts"
import type { SearchIndex } from "./SearchIndex.ts"
import { encodeSnapshot } from "./Snapshot.ts"

/** The added pages' index, with the options of the snapshot it is searched beside. */
export const buildSegment = (documents: ReadonlyArray<IndexDocument>, options: EngineOptions): SearchIndex => {
  const builder = new IndexBuilder(options)
  builder.add(documents)
  return builder.build()
}

export interface SegmentInput {
  readonly documents: ReadonlyArray<IndexDocument>
  readonly options: EngineOptions
}

/** buildSegment as snapshot bytes. */
export const segmentSnapshot = (input: SegmentInput): Uint8Array => encodeSnapshot(buildSegment(input.documents, input.options))

export const segmentSnapshotJob = defineJob(import.meta.url, "index.segment", segmentSnapshot, { transfer: (bytes) => [bytes.buffer as ArrayBuffer] })
