/**
 * `periscope reload`: asks the running server to read its snapshot again by
 * sending SIGHUP to the PID the server keeps in <dataDir>/periscope.pid.
 * The signal goes to the server process itself, not to whatever started it
 * (npm, a shell), so it reloads instead of being killed.
 */
import { Console, Effect, FileSystem, Option, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { loadSettings } from "./settings.ts"

export class ReloadError extends Schema.TaggedError<ReloadError>()("ReloadError", {
  reason: Schema.Literals(["NoServer", "BadPidFile", "NotPermitted"]),
  /** The PID file the message is about. */
  subject: Schema.String,
  message: Schema.String
}) {}

/** The PID file a server writes in its data directory. */
export const pidFileOf = (dataDir: string): string => `${dataDir}/periscope.pid`

/** The first line of a PID file as a PID; undefined when it is not one. */
export const parsePid = (text: string): number | undefined => {
  const first = text.trim().split(/\s+/)[0] ?? ""
  return /^[1-9][0-9]{0,9}$/.test(first) ? Number(first) : undefined
}

/** SIGHUP to the process; the error code of kill(2) when it fails. */
const signal = (pid: number, name: NodeJS.Signals | 0): string | undefined => {
  try {
    process.kill(pid, name)
    return undefined
  } catch (error) {
    return (error as { code?: string }).code ?? "EUNKNOWN"
  }
}

export const reloadCommand = Command.make(
  "reload",
  {
    dataDir: Flag.String("data-dir").pipe(
      Flag.withDescription("Data directory of the server to reload (default: PERISCOPE_DATA_DIR, ./.periscope)"),
      Flag.optional
    )
  },
  Effect.fn("periscope.reload")(function*(input) {
    const settings = yield* loadSettings
    const dataDir = Option.getOrElse(input.dataDir, () => settings.dataDir)
    const file = pidFileOf(dataDir)
    const fs = yield* FileSystem.FileSystem
    const text = yield* Effect.orElseSucceed(fs.readFileString(file), () => undefined)
    if (text === undefined) {
      return yield* new ReloadError({
        reason: "NoServer",
        subject: file,
        message: `no Periscope server is running with data directory ${dataDir} (no PID file); start one with \`periscope serve\``
      })
    }
    const pid = parsePid(text)
    if (pid === undefined) {
      return yield* new ReloadError({ reason: "BadPidFile", subject: file, message: `does not hold a PID, got ${JSON.stringify(text.slice(0, 40))}` })
    }
    const failed = signal(pid, "SIGHUP")
    if (failed === "ESRCH") {
      return yield* new ReloadError({
        reason: "NoServer",
        subject: file,
        message: `names PID ${pid}, which is not running: the server stopped without removing the file; start it again`
      })
    }
    if (failed !== undefined) {
      return yield* new ReloadError({ reason: "NotPermitted", subject: file, message: `cannot signal PID ${pid}: ${failed} (run as the server's user)` })
    }
    yield* Console.log(`Sent SIGHUP to Periscope (PID ${pid}): it reads its search snapshot again (its log says what it loaded).`)
  })
).pipe(Command.withDescription("Make the running server reload its search snapshot (SIGHUP to the PID in <dataDir>/periscope.pid)"))
