/**
 * Per-host politeness: at most one request in flight per host, and a pause of
 * the host's delay between the end of one request and the start of the next.
 * Time comes from an injected Clock, so tests can check the pauses on a
 * virtual clock instead of measuring real time.
 */

export interface Clock {
  readonly now: () => number
  readonly sleep: (ms: number) => Promise<void>
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))
}

interface HostState {
  busy: boolean
  nextAt: number
  waiters: Array<() => void>
}

export class HostGate {
  readonly #hosts = new Map<string, HostState>()
  readonly #clock: Clock
  readonly #delayFor: (host: string) => number
  readonly #onRelease: () => void

  /** `delayFor` is read at each release, so a delay learnt later (robots.txt Crawl-delay) applies. */
  constructor(clock: Clock, delayFor: (host: string) => number, onRelease: () => void = () => {}) {
    this.#clock = clock
    this.#delayFor = delayFor
    this.#onRelease = onRelease
  }

  #state(host: string): HostState {
    let state = this.#hosts.get(host)
    if (state === undefined) {
      state = { busy: false, nextAt: Number.NEGATIVE_INFINITY, waiters: [] }
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

  /** Waits for the host's turn; the returned function ends the request and starts the pause. */
  async acquire(host: string): Promise<() => void> {
    const state = this.#state(host)
    for (;;) {
      if (state.busy) {
        await new Promise<void>((resolve) => state.waiters.push(resolve))
        continue
      }
      const wait = state.nextAt - this.#clock.now()
      if (wait > 0) {
        await this.#clock.sleep(wait)
        continue
      }
      state.busy = true
      let released = false
      return () => {
        if (released) return
        released = true
        state.busy = false
        state.nextAt = this.#clock.now() + this.#delayFor(host)
        for (const wake of state.waiters.splice(0)) wake()
        this.#onRelease()
      }
    }
  }
}
