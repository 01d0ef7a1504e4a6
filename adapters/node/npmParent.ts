/**
 * Under `npm start`, npm passes SIGINT and SIGTERM on to the server but not
 * SIGHUP: `kill -HUP <npm pid>` ends npm and leaves the server running
 * without it. When the npm that started us goes away (our parent process
 * changes), that is most likely such a SIGHUP (or a closed terminal, which
 * sends us one too), so it is read as a reload request, and the log says how
 * to reach the server from now on. Needs the npm script to `exec` node, so
 * that npm is the parent and not a shell.
 */
import { Effect, Queue, Stream } from "effect"

const CHECK_MS = 500

/** One element when the npm process that ran us has exited; empty when not started by npm. */
export const npmParentExits: Stream.Stream<void> = process.env.npm_lifecycle_event === undefined
  ? Stream.empty
  : Stream.callback<void>((queue) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const parent = process.ppid
        const timer = setInterval(() => {
          if (process.ppid === parent) return
          clearInterval(timer)
          process.stderr.write(
            `npm (pid ${parent}), which started Periscope, has exited (npm does not pass SIGHUP on); reloading as SIGHUP would. ` +
              `Periscope keeps serving as pid ${process.pid}: reload it with "kill -HUP ${process.pid}", stop it with "kill ${process.pid}".\n`
          )
          Queue.offerUnsafe(queue, undefined)
        }, CHECK_MS)
        timer.unref()
        return timer
      }),
      (timer) => Effect.sync(() => clearInterval(timer))
    ))
