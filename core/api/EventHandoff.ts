/**
 * The events of one SSE answer on their way to its body: a fiber runs the
 * events and hands each pulled array over here; the body's pull takes it, or
 * waits for it with one timer, and gets a keep-alive item when the timer
 * fires first. At a shutdown (StreamsEnd) the events' fiber is interrupted
 * and, after what was already handed over, the pull is done.
 *
 * One fiber, and a plain timer only while the pull waits: the Stream.merge of
 * the events with a timed keep-alive pull it replaces forked about six fibers
 * per stream (the merge's two sides, a race of a sleep and the shutdown) and
 * interrupted most of them at the end, a large share of a streamed answer's
 * CPU (test/bench/gateway.ts, CPU per stream).
 */
import { Cause, Effect, Exit, type Fiber, Scope, Stream } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import type * as Pull from "effect/Pull"
import type { StreamsEnd } from "./ServerOptions.ts"

type Taken<A> = Pull.Pull<NonEmptyReadonlyArray<A>>

export class EventHandoff<A> {
  /** Set once a shutdown ended the events. */
  shutDown = false
  /** When the last item was taken (Date.now()): a keep-alive is due `keepAliveMs` after it. */
  private lastOut = Date.now()
  /** One array handed over and not yet taken (the events' fiber waits before handing another). */
  private pending: NonEmptyReadonlyArray<A> | undefined = undefined
  /** The events' fiber waiting to hand over its next array. */
  private giver: (() => void) | undefined = undefined
  /** The body's pull waiting, and its keep-alive timer. */
  private taker: ((taken: Taken<A>) => void) | undefined = undefined
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  /** How the events' fiber ended. */
  private ended: Exit.Exit<void> | undefined = undefined
  private readonly keepAliveMs: number
  private readonly keepAlive: A

  constructor(keepAliveMs: number, keepAlive: A) {
    this.keepAliveMs = keepAliveMs
    this.keepAlive = keepAlive
  }

  /** Runs `events` in a fiber of `scope` (closing it interrupts them), until they end or `end` signals a shutdown. */
  start(events: Stream.Stream<A>, end: StreamsEnd, scope: Scope.Scope): Effect.Effect<void> {
    // Started at once, not on the scheduler's next turn (a setImmediate before the first event).
    return Effect.map(Effect.forkIn(Stream.runForEachArray(events, (array) => this.put(array)), scope, { startImmediately: true }), (fiber) => {
      const unlisten = end.onEnd(() => this.stop(fiber))
      fiber.addObserver((exit) => {
        unlisten()
        this.ended = exit
        this.settle()
      })
    })
  }

  /** The next array, a keep-alive after `keepAliveMs` of silence, or done when the events ended. */
  readonly take: Taken<A> = Effect.suspend(() => {
    const ready = this.ready()
    if (ready !== undefined) return ready
    return Effect.callback<NonEmptyReadonlyArray<A>, Cause.Done>((resume) => {
      this.taker = resume
      this.timer = setTimeout(this.onSilence, Math.max(0, this.lastOut + this.keepAliveMs - Date.now()))
      return Effect.sync(this.cancelTake)
    })
  })

  private put(array: NonEmptyReadonlyArray<A>): Effect.Effect<void> {
    if (this.taker !== undefined) {
      this.lastOut = Date.now()
      this.wake(Effect.succeed(array))
      return Effect.void
    }
    if (this.pending === undefined) {
      this.pending = array
      return Effect.void
    }
    return Effect.callback<void>((resume) => {
      const giver = () => {
        this.pending = array
        resume(Effect.void)
      }
      this.giver = giver
      return Effect.sync(this.cancelGive)
    })
  }

  /** What the pull can have without waiting, or undefined. */
  private ready(): Taken<A> | undefined {
    const pending = this.pending
    if (pending !== undefined) {
      this.pending = undefined
      this.lastOut = Date.now()
      const giver = this.giver
      this.giver = undefined
      giver?.()
      return Effect.succeed(pending)
    }
    const ended = this.ended
    if (ended === undefined) return undefined
    // Interrupted: by a shutdown (the pull is done) or by the scope closing (nobody is pulling).
    // Events that cannot fail end otherwise only with a defect, which goes on to the body.
    return Exit.isFailure(ended) && !Cause.hasInterruptsOnly(ended.cause) ? Effect.failCause(ended.cause) : Cause.done()
  }

  /** Wakes a waiting pull with whatever is ready now. */
  private settle() {
    if (this.taker === undefined) return
    const ready = this.ready()
    if (ready !== undefined) this.wake(ready)
  }

  private wake(taken: Taken<A>) {
    const taker = this.taker!
    this.taker = undefined
    clearTimeout(this.timer)
    this.timer = undefined
    taker(taken)
  }

  private stop(fiber: Fiber.Fiber<unknown, unknown>) {
    this.shutDown = true
    fiber.interruptUnsafe()
  }

  private readonly onSilence = () => {
    this.timer = undefined
    this.lastOut = Date.now()
    const taker = this.taker
    this.taker = undefined
    taker?.(Effect.succeed([this.keepAlive]))
  }

  private readonly cancelTake = () => {
    clearTimeout(this.timer)
    this.timer = undefined
    this.taker = undefined
  }

  private readonly cancelGive = () => {
    this.giver = undefined
  }
}
