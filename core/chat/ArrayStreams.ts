/**
 * Per-chunk stream steps that work on the arrays a stream pulls, not element
 * by element: `Stream.flattenIterable` is a flatMap (a stream built per
 * element) and `Stream.mapEffect` runs an Effect per element; on a chat
 * stream that was most of the gateway's cost per chunk. One array in, one
 * array out also keeps the chunks of one upstream read in one socket write.
 */
import { Cause, Channel, Effect, Scope, Stream } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Pull from "effect/Pull"

/** Each pulled array mapped to any number of elements; an array that maps to none pulls the next one. */
export const mapArrays = <A, E, R, B>(
  self: Stream.Stream<A, E, R>,
  f: (array: NonEmptyReadonlyArray<A>) => ReadonlyArray<B>
): Stream.Stream<B, E, R> =>
  Stream.transformPull(self, (pull) => {
    const next: Pull.Pull<NonEmptyReadonlyArray<B>, E> = Effect.flatMap(pull, (array) => {
      const out = f(array)
      return out.length > 0 ? Effect.succeed(out as NonEmptyReadonlyArray<B>) : next
    })
    return Effect.succeed(next)
  })

/**
 * Each element through `step`, whose answer is usually ready at once (an
 * array) and sometimes an Effect; the outputs of one pulled array go out as
 * one array. After an element for which `stop()` holds, nothing more is
 * pulled and the stream ends (as Stream.takeUntil does).
 */
export const stepArrays = <A, E, R, B, E2>(
  self: Stream.Stream<A, E, R>,
  step: (element: A) => ReadonlyArray<B> | Effect.Effect<ReadonlyArray<B>, E2>,
  stop: () => boolean
): Stream.Stream<B, E | E2, R> =>
  Stream.transformPull(self, (pull) => {
    let done = false
    const from = (array: NonEmptyReadonlyArray<A>, start: number, out: Array<B>): Pull.Pull<NonEmptyReadonlyArray<B>, E | E2> => {
      for (let i = start; i < array.length; i++) {
        const result = step(array[i]!)
        if (Effect.isEffect(result)) {
          return Effect.flatMap(result, (later) => {
            for (let j = 0; j < later.length; j++) out.push(later[j]!)
            if (stop()) {
              done = true
              return emit(out)
            }
            return from(array, i + 1, out)
          })
        }
        for (let j = 0; j < result.length; j++) out.push(result[j]!)
        if (stop()) {
          done = true
          break
        }
      }
      return emit(out)
    }
    const emit = (out: Array<B>): Pull.Pull<NonEmptyReadonlyArray<B>, E | E2> =>
      out.length > 0 ? Effect.succeed(out as unknown as NonEmptyReadonlyArray<B>) : next
    const next: Pull.Pull<NonEmptyReadonlyArray<B>, E | E2> = Effect.suspend(() =>
      done ? Cause.done() : Effect.flatMap(pull, (array) => from(array, 0, []))
    )
    return Effect.succeed(next)
  })

/**
 * The stream's arrays, then the array `end` gives once it is done (not when it fails): what
 * `Stream.concat` with a last part does, without the module-level WeakMap in which Stream.concat
 * records its two parts. A WeakMap's value stays through young collections until a full one, even
 * after its key died with the request, and with it everything a part reaches.
 */
export const withEnd = <A, E, R, E2 = never>(
  self: Stream.Stream<A, E, R>,
  end: () => ReadonlyArray<A> | Effect.Effect<ReadonlyArray<A>, E2>
): Stream.Stream<A, E | E2, R> =>
  Stream.transformPull(self, (pull) => {
    let ended = false
    const last = (array: ReadonlyArray<A>): Pull.Pull<NonEmptyReadonlyArray<A>, E2> =>
      array.length > 0 ? Effect.succeed(array as NonEmptyReadonlyArray<A>) : Cause.done()
    const next: Pull.Pull<NonEmptyReadonlyArray<A>, E | E2> = Effect.suspend(() => {
      if (ended) return Cause.done()
      return Pull.catchDone(pull, () => {
        ended = true
        const result = end()
        return Effect.isEffect(result) ? Effect.flatMap(result, last) : last(result)
      })
    })
    return Effect.succeed(next)
  })

/** `first`, then the stream's arrays: a Stream.concat with a first part, without its WeakMap (see withEnd). */
export const withStart = <A, E, R>(first: NonEmptyReadonlyArray<A>, self: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
  Stream.transformPull(self, (pull) => {
    let started = false
    const next: Pull.Pull<NonEmptyReadonlyArray<A>, E> = Effect.suspend(() => {
      if (started) return pull
      started = true
      return Effect.succeed(first)
    })
    return Effect.succeed(next)
  })

/**
 * The arrays `pull` gives, as a stream; `close` runs when the stream's scope closes, however the
 * stream ends (done, failed, or stopped early by its reader).
 */
export const fromArrayPull = <A, E>(pull: Pull.Pull<NonEmptyReadonlyArray<A>, E>, close: Effect.Effect<void>): Stream.Stream<A, E> =>
  Stream.fromChannel(Channel.fromTransform((_, scope) => Effect.as(Scope.addFinalizer(scope, close), pull)))
