/**
 * Per-host politeness: at most one request in flight per host, and a pause of
 * the host's delay between the end of one request and the start of the next.
 * Time is Effect's Clock, so a TestClock drives the pauses in tests.
 */
import { Clock, Deferred, Effect } from "effect"

interface HostState {
  busy: boolean
  nextAt: number
  /** Completed when the request in flight ends. */
  released: Deferred.Deferred<void>
}

export class HostGate {
  readonly #hosts = new Map<string, HostState>()
  readonly #delayFor: (host: string) => number
  readonly #onRelease: () => void

  /** `delayFor` is read at each release, so a delay learnt later (robots.txt Crawl-delay) applies. */
  constructor(delayFor: (host: string) => number, onRelease: () => void = () => {}) {
    this.#delayFor = delayFor
    this.#onRelease = onRelease
  }

  #state(host: string): HostState {
    let state = this.#hosts.get(host)
    if (state === undefined) {
      state = { busy: false, nextAt: Number.NEGATIVE_INFINITY, released: Deferred.makeUnsafe<void>() }
      this.#hosts.set(host, state)
    }
    return state
  }

  /** When a request to `host` may start: now or later, or Infinity while one is in flight. */
  readyAt(host: string): number {
    const state = this.#hosts.get(host)
    if (state === undefined) return Number.NEGATIVE_INFINITY
    return state.busy ? Number.POSITIVE_INFINITY : state.nextAt
  }

  /** Runs `request` in the host's turn; the pause starts when it ends, however it ends. */
  use<A, E, R>(host: string, request: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    const state = this.#state(host)
    const release = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        state.busy = false
        state.nextAt = now + this.#delayFor(host)
        Deferred.doneUnsafe(state.released, Effect.void)
        this.#onRelease()
      }))
    const turn: Effect.Effect<void> = Effect.gen(function*() {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        // Checked and taken with no yield in between, so two fibers cannot both take it.
        if (state.busy) yield* Deferred.await(state.released)
        else if (state.nextAt > now) yield* Effect.sleep(state.nextAt - now)
        else {
          state.busy = true
          state.released = Deferred.makeUnsafe<void>()
          return
        }
      }
    })
    return Effect.uninterruptibleMask((restore) =>
      Effect.andThen(restore(turn), restore(request).pipe(Effect.ensuring(release)))
    )
  }
}
