/**
 * The helper thread's side of shared ranking (RankingChannel.ts): the index arrays it was sent
 * (views of the same SharedArrayBuffer as the answering thread's, so nothing is copied) and a
 * loop that takes each posted query, ranks the chunks it can claim and hands its heap back. An
 * adapter runs `serveRanking` in a thread of its own (adapters/node/rankingWorker.ts); it
 * returns when the channel is stopped.
 */
import { InvertedIndex, type InvertedIndexArrays, type InvertedIndexMeta, PostingCursor } from "./InvertedIndex.ts"
import { rankChunk } from "./Ranker.ts"
import type { RankingChannel } from "./RankingChannel.ts"
import type { SearchIndex } from "./SearchIndex.ts"
import { termAtATimePlan } from "./TermAtATime.ts"
import { TopK } from "./TopK.ts"

/** What the helper needs of a SearchIndex: its two inverted indexes and their near-duplicate clusters. */
export interface RankingArrays {
  readonly web: { readonly meta: InvertedIndexMeta; readonly arrays: InvertedIndexArrays }
  readonly images: { readonly meta: InvertedIndexMeta; readonly arrays: InvertedIndexArrays }
  readonly pageCluster: Int32Array
  readonly imageCluster: Int32Array
}

/** The arrays to send the helper; undefined unless every one lies in a SharedArrayBuffer (then the helper would need a copy). */
export const rankingArraysOf = (index: SearchIndex): RankingArrays | undefined => {
  const { web, images, pageCluster, imageCluster } = index.parts
  const typed = [...Object.values(web.arrays), ...Object.values(images.arrays), pageCluster, imageCluster] as Array<ArrayBufferView>
  // Empty arrays (a snapshot without run data) may be the runtime's own; they hold nothing to share.
  if (!typed.every((a) => a.byteLength === 0 || a.buffer instanceof SharedArrayBuffer)) return undefined
  return { web: { meta: web.meta, arrays: web.arrays }, images: { meta: images.meta, arrays: images.arrays }, pageCluster, imageCluster }
}

/** The helper's loop: until the channel is stopped, ranks its share of each posted query. */
export const serveRanking = (channel: RankingChannel, arrays: RankingArrays): void => {
  const web = new InvertedIndex(arrays.web.meta, arrays.web.arrays)
  const images = new InvertedIndex(arrays.images.meta, arrays.images.arrays)
  for (let query = channel.take(); query !== undefined; query = channel.take()) {
    const index = query.images ? images : web
    const cluster = !query.clustered ? undefined : query.images ? arrays.imageCluster : arrays.pageCluster
    let cursors: Array<PostingCursor> = []
    let failed = false
    try {
      // The answering thread's idf: its index may be scored with a larger collection's statistics (a segment beside it).
      cursors = Array.from(query.termIds, (termId, i) => {
        const idf = query.idfs[i]!
        return Number.isNaN(idf) ? new PostingCursor(index, termId, query.weights[i]!) : new PostingCursor(index, termId, query.weights[i]!, 0, idf)
      })
      const heap = new TopK(query.k, cluster)
      // The answering thread's plan, found again from the same words and bound.
      const plan = query.strategy === "termAtATime" ? termAtATimePlan(cursors, query.primed) : undefined
      const ranking = { strategy: query.strategy, plan, primed: query.primed }
      // Chunk by chunk, each published as it is done: the answering thread may stop waiting at any point.
      let held = 0
      for (let c = channel.claimTheirs(); c >= 0; c = channel.claimTheirs()) {
        rankChunk(index, cursors, heap, ranking, channel, c)
        held |= 1 << c
        if (!channel.publish(heap.sorted(), held)) break
      }
    } catch {
      // The answering thread ranks this thread's chunks itself, and meets the error there if it is the index's.
      failed = true
    } finally {
      for (const cursor of cursors) cursor.close()
    }
    channel.done(failed)
  }
}
