/**
 * An upstream stream's deadlines after its response head, on one plain timer:
 * the first token's, then the total's, then the wait for the body's end after
 * [DONE]. When the one set passes, the try's scope is closed, which aborts the
 * request and fails the read waiting on it; the reader then finds here which
 * deadline it was. Racing each wait against a sleep (Effect.timeoutOrElse, or
 * a forked sleep for the total) was two fibers a deadline, seven a stream.
 */
import { Effect, Exit, Scope } from "effect"

export type DeadlineKind = "first-token" | "total" | "body-end"

export class StreamDeadline {
  /** The deadline that passed and closed the scope, if one did. */
  passed: DeadlineKind | undefined = undefined
  private kind: DeadlineKind = "total"
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private readonly scope: Scope.Closeable

  constructor(scope: Scope.Closeable) {
    this.scope = scope
  }

  /** From now on, `kind` is the deadline, `ms` from now (the one set before is dropped). */
  set(kind: DeadlineKind, ms: number): void {
    clearTimeout(this.timer)
    this.kind = kind
    this.timer = setTimeout(this.fire, Math.max(0, ms))
  }

  /** No deadline any more (the scope is closing). */
  readonly clear = (): void => {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private readonly fire = () => {
    this.timer = undefined
    this.passed = this.kind
    Effect.runFork(Scope.close(this.scope, Exit.void))
  }
}
