/**
 * One writer at a time for a file that is read, changed and written back (the snapshot of
 * `periscope index`, the keys file): a lock file beside it, created with O_EXCL, naming the
 * owner's pid and host. A lock whose owner is gone (same host, pid not running) is stale and
 * taken over, so a killed run never blocks the next one.
 *
 * Not proper-lockfile: its locks go stale when their owner stops refreshing them, and an index
 * build holds the event loop for longer than any refresh period, so a live run's lock would be
 * taken from it. A pid has no such window. (Locks on a folder shared by several machines are
 * judged by host: one held from another machine is never taken over, only reported.)
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, unlinkSync, writeSync } from "node:fs"
import { hostname } from "node:os"
import { dirname } from "node:path"
import { Effect, Schema } from "effect"

/** The lock is held by another process (or fiber) and did not come free in time. */
export class FileLockError extends Schema.TaggedError<FileLockError>()("FileLockError", {
  /** The file the lock guards. */
  subject: Schema.String,
  message: Schema.String
}) {}

/** Whether a process with this pid is running on this machine. */
export const isProcessAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

interface Holder {
  readonly pid: number
  readonly host: string
  readonly since: string
  readonly purpose: string
}

/** How long a change of the keys file waits for another one (`keys create`, a server's first start): each takes milliseconds. */
export const KEYS_LOCK_WAIT_MS = 10_000

export const lockPathOf = (file: string): string => `${file}.lock`

/** A lock file still being written by its creator is empty for a moment; one that stays empty this long was left by a crash. */
const EMPTY_LOCK_STALE_MS = 10_000
/** A stale lock is broken under a second, short-lived guard, so two processes cannot both break it and both go on. */
const BREAK_GUARD_STALE_MS = 10_000
const POLL_MS = 50

const readHolder = (lock: string): { readonly raw: string; readonly holder: Holder | undefined } | undefined => {
  let raw: string
  try {
    raw = readFileSync(lock, "utf8")
  } catch {
    return undefined
  }
  try {
    const parsed = JSON.parse(raw) as Partial<Holder>
    return typeof parsed.pid === "number" && typeof parsed.host === "string"
      ? { raw, holder: { pid: parsed.pid, host: parsed.host, since: String(parsed.since ?? "?"), purpose: String(parsed.purpose ?? "a run") } }
      : { raw, holder: undefined }
  } catch {
    return { raw, holder: undefined }
  }
}

const ageMs = (path: string): number => {
  try {
    return Date.now() - statSync(path).mtimeMs
  } catch {
    return 0
  }
}

const isStale = (lock: string, seen: { readonly raw: string; readonly holder: Holder | undefined }): boolean =>
  seen.holder === undefined
    ? ageMs(lock) > EMPTY_LOCK_STALE_MS
    : seen.holder.host === hostname() && seen.holder.pid !== process.pid && !isProcessAlive(seen.holder.pid)

/** Removes the stale lock if it is still the one judged stale (all synchronous: no other fiber runs meanwhile). */
const breakStale = (lock: string, raw: string): void => {
  const guard = `${lock}.break`
  let fd: number
  try {
    fd = openSync(guard, "wx")
  } catch {
    // Another process is breaking it; a guard left by a crash in these few lines is removed once old.
    if (ageMs(guard) > BREAK_GUARD_STALE_MS) rmSync(guard, { force: true })
    return
  }
  try {
    if (readHolder(lock)?.raw === raw) unlinkSync(lock)
  } finally {
    closeSync(fd)
    rmSync(guard, { force: true })
  }
}

type Attempt =
  | { readonly _tag: "Acquired"; readonly raw: string }
  | { readonly _tag: "Held"; readonly holder: Holder | undefined }

const tryAcquire = (lock: string, purpose: string): Attempt => {
  const raw = JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString(), purpose }) + "\n"
  mkdirSync(dirname(lock), { recursive: true })
  for (let round = 0; round < 3; round++) {
    try {
      const fd = openSync(lock, "wx", 0o644)
      try {
        writeSync(fd, raw)
      } finally {
        closeSync(fd)
      }
      return { _tag: "Acquired", raw }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const seen = readHolder(lock)
    // Gone between the open and the read: try again at once.
    if (seen === undefined) continue
    if (!isStale(lock, seen)) return { _tag: "Held", holder: seen.holder }
    breakStale(lock, seen.raw)
  }
  return { _tag: "Held", holder: readHolder(lock)?.holder }
}

type Outcome<A> = { readonly done: true; readonly value: A } | { readonly done: false; readonly holder: Holder | undefined }

const describeHolder = (holder: Holder | undefined): string =>
  holder === undefined
    ? "another process"
    : `${holder.purpose} (pid ${holder.pid}${holder.host === hostname() ? "" : ` on ${holder.host}`}, since ${holder.since})`

export interface FileLockOptions {
  /** What this process is doing, as the holder is named to a process that waits: "periscope index". */
  readonly purpose: string
  /** How long to wait for the lock to come free; 0 refuses at once. */
  readonly waitMs: number
}

/**
 * Runs `effect` holding the lock of `file` (`<file>.lock`); fails with FileLockError naming the
 * holder when the lock stays held for `waitMs`. The lock is released when the effect ends, however
 * it ends (an interrupt included); a process killed outright leaves it, and the next taker sees
 * its pid gone.
 */
export const withFileLock = <A, E, R>(
  file: string,
  options: FileLockOptions,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | FileLockError, R> => {
  const lock = lockPathOf(file)
  const release = (attempt: Attempt) =>
    Effect.sync(() => {
      // Only our own lock: one taken over from us (judged stale by mistake) is the new owner's.
      if (attempt._tag === "Acquired" && readHolder(lock)?.raw === attempt.raw) rmSync(lock, { force: true })
    })
  // One try: the lock taken (without a gap an interrupt could fall in) and the effect run, or the holder.
  const once = Effect.acquireUseRelease(
    Effect.try({
      try: () => tryAcquire(lock, options.purpose),
      catch: (error) => new FileLockError({ subject: file, message: `cannot create the lock file ${lock}: ${error instanceof Error ? error.message : String(error)}` })
    }),
    (attempt): Effect.Effect<Outcome<A>, E, R> =>
      attempt._tag === "Acquired" ? Effect.map(effect, (value) => ({ done: true, value })) : Effect.succeed({ done: false, holder: attempt.holder }),
    release
  )
  return Effect.gen(function*() {
    const deadline = Date.now() + options.waitMs
    for (;;) {
      const outcome = yield* once
      if (outcome.done) return outcome.value
      if (Date.now() >= deadline) {
        const waited = options.waitMs > 0 ? ` for ${Math.round(options.waitMs / 1000)} s` : ""
        return yield* new FileLockError({
          subject: file,
          message: `is being changed by ${describeHolder(outcome.holder)}; tried${waited} to lock it with ${lock}. ` +
            "Wait for that run to finish and try again (if no such process is running, remove the lock file)"
        })
      }
      yield* Effect.sleep(POLL_MS)
    }
  })
}
