/**
 * `npm start`: the Periscope HTTP server on Node.
 *
 * Start: the PID is logged and written to `<dataDir>/periscope.pid` (for
 * `periscope reload`), the services are built (keys, index, chat stack)
 * and only then does the port open, so a request sent at any moment of a
 * start is answered, never left hanging (GatedServer also holds requests
 * that arrive between the listen and the handler being attached).
 *
 * Shutdown on SIGTERM/SIGINT: new requests get 503 at once; requests in
 * flight have `shutdownGraceSeconds`; shortly before that, open chat streams
 * end with an error event and `data: [DONE]` and requests not yet answered
 * get 503; then the port closes and the process exits 0, within the grace.
 *
 * At start: temporary snapshot files of index runs that were killed are
 * removed (and named in the log), and a keys file that other users may read
 * is warned about.
 */
import { readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer } from "effect"
import { makeStreamsEnd } from "../../core/api/ServerOptions.ts"
import { appLayer } from "../../core/app/Application.ts"
import { type KeysFileLock, setupKeys } from "../../core/app/KeySetup.ts"
import { SettingsError } from "../../core/config/Settings.ts"
import { searchChoiceOf } from "../../core/app/SearchBackend.ts"
import { defaultWarmUp } from "../../core/index/WarmUp.ts"
import { FileLockError, KEYS_LOCK_WAIT_MS, withFileLock } from "./fileLock.ts"
import type { GatedServer } from "./GatedServer.ts"
import { startNodeServer } from "./nodeServer.ts"
import { BrowserRenderer } from "./browserRenderer.ts"
import { nodeEngineHooks, nodePlatform } from "./platform.ts"
import { loadSettings } from "./settings.ts"
import { removeLeftOverTemporaries } from "./snapshotFile.ts"

/** Slowloris guard: a client has this long to send its request headers. */
const HEADERS_TIMEOUT_MS = 15_000
/** A whole request (a 16 MiB chat body on a slow link included) must have arrived by then; answers are not bounded by it. */
const REQUEST_TIMEOUT_MS = 120_000
const KEEP_ALIVE_TIMEOUT_MS = 5_000

const announceKey = (key: string, file: string) =>
  Effect.sync(() => {
    // The one time this key is shown: only its hash is stored.
    process.stdout.write(
      `\nNo API key was configured, so Periscope made one. It is shown only now:\n\n    ${key}\n\n` +
        `Its SHA-256 is kept in ${file}. Send it as "Authorization: Bearer <key>".\n` +
        `Set PERISCOPE_API_KEYS or PERISCOPE_KEYS_FILE to use your own keys.\n\n`
    )
  })

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** `<dataDir>/periscope.pid` for as long as this process serves; removed on exit unless another process took it over. */
const pidFile = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const file = join(dataDir, "periscope.pid")
      let previous: number | undefined
      try {
        previous = Number(readFileSync(file, "utf8").trim())
      } catch {
        previous = undefined
      }
      if (previous !== undefined && previous !== process.pid && Number.isInteger(previous) && previous > 0 && isAlive(previous)) {
        yield* Effect.logWarning(`${file} names process ${previous}, which is still running (another Periscope on the same data directory?); it now names this one`)
      }
      mkdirSync(dataDir, { recursive: true })
      writeFileSync(file, `${process.pid}\n`)
      return file
    }),
    (file) =>
      Effect.sync(() => {
        try {
          if (Number(readFileSync(file, "utf8").trim()) === process.pid) rmSync(file)
        } catch {
          // already gone
        }
      })
  )

/** The generated key is written under the keys file's lock, as `periscope keys` changes are. */
const lockKeysFile: KeysFileLock = (file, change) =>
  withFileLock(file, { purpose: "periscope serve", waitMs: KEYS_LOCK_WAIT_MS }, change).pipe(
    Effect.mapError((error) => error instanceof FileLockError ? new SettingsError({ setting: "PERISCOPE_DATA_DIR", message: `${error.subject} ${error.message}` }) : error)
  )

/** Temporary files of index runs on the snapshot that were killed: removed, each named in the log. */
const removeLeftOvers = (snapshot: string | undefined) =>
  Effect.forEach(
    snapshot === undefined || /^https?:\/\//i.test(snapshot) ? [] : removeLeftOverTemporaries(snapshot),
    (left) => Effect.logWarning(`Removed ${left.path} (${(left.bytes / (1024 * 1024)).toFixed(1)} MiB), the temporary file of an index run that was killed`),
    { discard: true }
  )

/** A keys file others may read or change lets them learn key hashes or add keys of their own: say how to close it. */
const warnIfShared = (file: string | undefined) =>
  Effect.suspend(() => {
    if (file === undefined) return Effect.void
    let mode: number
    try {
      mode = statSync(file).mode & 0o777
    } catch {
      return Effect.void
    }
    if ((mode & 0o077) === 0) return Effect.void
    return Effect.logWarning(
      `${file} can be read${(mode & 0o022) === 0 ? "" : " or changed"} by other users (mode ${mode.toString(8).padStart(3, "0")}); ` +
        `only its owner should: chmod 600 ${file}`
    )
  })

/**
 * The drain, run when the main fiber is interrupted (SIGTERM/SIGINT), while
 * the server and its request fibers are still up.
 */
const drain = (server: GatedServer, streamsEnd: ReturnType<typeof makeStreamsEnd>, graceSeconds: number) =>
  Effect.gen(function*() {
    const graceMs = graceSeconds * 1000
    // Streams are ended this long before the deadline so their last events reach the client in time.
    const margin = Math.min(1_000, graceMs / 4)
    const started = Date.now()
    // Whatever the closing of the services does, the process is gone at the end of the grace.
    setTimeout(() => {
      process.stderr.write(`Shutdown: still closing after ${graceSeconds} s; exiting now\n`)
      process.exit(0)
    }, graceMs).unref()
    server.drain()
    yield* Effect.logInfo(`Shutting down: ${server.inFlight} request(s) in flight, up to ${graceSeconds} s; new requests get 503`)
    let settled = yield* Effect.promise(() => server.settled(graceMs - margin))
    if (!settled) {
      // Whatever is still open gets its answer now: streams an error event and [DONE], the rest 503.
      const refused = server.refuseUnanswered()
      yield* Effect.logInfo(`Ending ${server.inFlight} open request(s): ${refused} answered 503, streams get an error event and [DONE]`)
      yield* Effect.sync(streamsEnd.end)
      settled = yield* Effect.promise(() => server.settled(graceMs - (Date.now() - started)))
    }
    if (!settled) yield* Effect.logWarning(`${server.inFlight} request(s) still open after ${graceSeconds} s are cut`)
    // What is left is cut, so that closing the server does not wait for it.
    server.closeAllConnections()
  })

const program = Effect.gen(function*() {
  const settings = yield* loadSettings
  yield* Effect.logInfo(`Periscope starting (pid ${process.pid}, data in ${settings.dataDir})`)
  yield* pidFile(settings.dataDir)
  yield* removeLeftOvers(settings.search.snapshot)
  const keys = yield* Effect.provide(setupKeys(settings, "persist", [], lockKeysFile), nodePlatform)
  if (keys.generatedKey !== undefined) yield* announceKey(keys.generatedKey, keys.generatedFile!)
  yield* warnIfShared(settings.keysFile ?? keys.generatedFile)
  const services = appLayer(settings, keys.records, {
    // Warm-up queries before the port opens: the first users get a compiled query path (core/index/WarmUp.ts).
    search: searchChoiceOf(settings.search, settings.search.snapshot, defaultWarmUp.maxMs),
    hooks: nodeEngineHooks(settings)
  }).pipe(Layer.provide([nodePlatform, BrowserRenderer.layerConfig(settings.file.fetch)]))
  // Everything the handlers need is built before the port opens.
  const context = yield* Layer.build(services)
  const streamsEnd = makeStreamsEnd()
  const httpServer = yield* startNodeServer(context, {
    port: settings.port,
    host: settings.host,
    logRequests: settings.logRequests,
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
    lifecycle: { streamsEnd }
  })
  const address = httpServer.address()
  const where = typeof address === "object" && address !== null ? `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}` : String(address)
  yield* Effect.logInfo(`Periscope ready on ${where} (pid ${process.pid})`)
  // Added last, so it runs first when the scope closes: before the server stops.
  yield* Effect.addFinalizer(() => drain(httpServer, streamsEnd, settings.shutdownGraceSeconds))
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  Effect.catchTag("SettingsError", (error) =>
    Effect.sync(() => {
      process.stderr.write(`Invalid configuration: ${error.setting}: ${error.message}\n`)
      process.exitCode = 1
    }))
)

// A SIGHUP that arrives while the services are still being built must not end the process (the default action);
// the index loaded then is the newest anyway. Once up, the engine's own listener reloads.
process.on("SIGHUP", () => {})

// A shutdown on request (interruption by SIGTERM/SIGINT) is a clean exit.
NodeRuntime.runMain(program, {
  teardown: (exit, onExit) =>
    onExit(Exit.isSuccess(exit) ? Number(process.exitCode ?? 0) : Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
})
