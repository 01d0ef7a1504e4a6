/**
 * Notes a search backend leaves about how it answered (hybrid retrieval fell back to BM25
 * because the embedding server was down, the reranker timed out), collected per request
 * without changing WebSearch's answer type: the federation gathers them around the local
 * engine's call and shows them in `extra` when the request asks (`explain: true`).
 */
import { Context, Effect } from "effect"

/** Where the current request's notes go; undefined when nobody collects them. */
export const RetrievalNotes = Context.Reference<Array<string> | undefined>("periscope/search/RetrievalNotes", {
  defaultValue: () => undefined
})

/** Leaves a note for whoever collects them (nothing when nobody does). */
export const noteRetrieval = (note: string): Effect.Effect<void> =>
  Effect.map(Effect.service(RetrievalNotes), (notes) => {
    if (notes !== undefined && !notes.includes(note)) notes.push(note)
  })

/** Runs `effect` collecting the notes it leaves: its value and the notes. */
export const collectNotes = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<readonly [A, ReadonlyArray<string>], E, R> =>
  Effect.suspend(() => {
    const notes: Array<string> = []
    return Effect.map(Effect.provideService(effect, RetrievalNotes, notes), (value) => [value, notes] as const)
  })
