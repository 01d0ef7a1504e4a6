/**
 * Which query terms occur in one field of each result: read from the postings, so that a
 * snippet knows which words it can find in a page's text before it scans it. A snippet stops
 * scanning once a window holds every wanted word; a wanted word the text lacks (the page
 * matched on its title or URL) used to keep it scanning to the end of the text.
 */
import { type InvertedIndex, PostingCursor } from "./InvertedIndex.ts"

/** Masks hold one bit per term: queries with more terms get no masks (every term assumed present). */
export const maxMaskedTerms = 31

/**
 * For each document of `docs` (any order), a mask of the `termIds` (bit i: termIds[i]) whose
 * term frequency in `field` is above zero; undefined when there are too many terms.
 */
export const termsInField = (
  index: InvertedIndex,
  termIds: ReadonlyArray<number>,
  docs: Int32Array,
  field: number
): Uint32Array | undefined => {
  if (termIds.length > maxMaskedTerms) return undefined
  const masks = new Uint32Array(docs.length)
  // Postings are read forward only: visit the documents in increasing order.
  const byDoc = Array.from(docs.keys()).sort((a, b) => docs[a]! - docs[b]!)
  for (let t = 0; t < termIds.length; t++) {
    const cursor = new PostingCursor(index, termIds[t]!, 1, docs[byDoc[0]!] ?? 0)
    const bit = 1 << t
    for (const i of byDoc) {
      const doc = docs[i]!
      cursor.advance(doc)
      if (cursor.doc === doc && cursor.tf(field) > 0) masks[i]! |= bit
    }
    cursor.close()
  }
  return masks
}
