/**
 * Snapshot files on disk: read one into bytes, write one atomically (a temporary file in the
 * same folder, flushed, then renamed over the target), so a reader or a crash never sees
 * half a snapshot; the temporary files of writers that were killed are removed by the next
 * run or start. Decoding is core's job (core/index/Snapshot.ts); this only moves bytes.
 */
import { closeSync, existsSync, fstat, fstatSync, openSync, read, readdirSync, readSync, rmSync, statSync, type Stats } from "node:fs"
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { Effect, Schema } from "effect"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import { openSnapshot, SnapshotError, type SnapshotSource, TextInSource } from "../../core/index/Snapshot.ts"
import { decodeSnapshotFast, withFastChecksum } from "../../core/index/SnapshotLoad.ts"
import { isProcessAlive } from "./fileLock.ts"

/** A snapshot file could not be read or written; `path` names it, `message` says why. */
export class SnapshotFileError extends Schema.TaggedError<SnapshotFileError>()("SnapshotFileError", {
  path: Schema.String,
  message: Schema.String
}) {}

const reason = (error: unknown): string => {
  const code = (error as { code?: string }).code
  if (code === "ENOENT") return "no such file"
  if (code === "EACCES" || code === "EPERM") return "permission denied"
  if (code === "EISDIR") return "is a directory"
  if (code === "ENOSPC") return "no space left on the device"
  return error instanceof Error ? error.message : String(error)
}

/** The file's bytes. */
export const readSnapshotFile = (path: string): Effect.Effect<Uint8Array, SnapshotFileError> =>
  Effect.tryPromise({
    try: async () => {
      const buffer = await readFile(path)
      // A Buffer may sit at an odd offset of a shared pool; hand core a plain, owned Uint8Array.
      return buffer.byteOffset % 8 === 0 && buffer.byteLength === buffer.buffer.byteLength
        ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
        : new Uint8Array(buffer)
    },
    catch: (error) => new SnapshotFileError({ path, message: `cannot read the snapshot: ${reason(error)}` })
  })

const TEMPORARY_SUFFIX = ".tmp"

/** A temporary file of a write to `path` that was cut short (its writer killed), with its size. */
export interface LeftOverFile {
  readonly path: string
  readonly bytes: number
}

/**
 * Removes the temporary files that writes to `path` left behind when their process was killed
 * (`.<name>.<pid>.<time>.tmp` beside it, whose pid no longer runs): a write in progress is left
 * alone. Returns what was removed, for the log; a file that cannot be removed is skipped.
 */
export const removeLeftOverTemporaries = (path: string): ReadonlyArray<LeftOverFile> => {
  const folder = dirname(path)
  const prefix = `.${basename(path)}.`
  let names: Array<string>
  try {
    names = readdirSync(folder)
  } catch {
    return []
  }
  const removed: Array<LeftOverFile> = []
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(TEMPORARY_SUFFIX)) continue
    const pid = Number(name.slice(prefix.length).split(".")[0])
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || isProcessAlive(pid)) continue
    const file = join(folder, name)
    try {
      const bytes = statSync(file).size
      rmSync(file)
      removed.push({ path: file, bytes })
    } catch {
      // gone already, or not ours to remove
    }
  }
  return removed
}

/** Writes `bytes` to `path` through a temporary file and a rename; the folder is created when missing. */
export const writeSnapshotFile = (path: string, bytes: Uint8Array): Effect.Effect<void, SnapshotFileError> =>
  Effect.tryPromise({
    try: async () => {
      const folder = dirname(path)
      await mkdir(folder, { recursive: true })
      const temporary = join(folder, `.${basename(path)}.${process.pid}.${Date.now()}${TEMPORARY_SUFFIX}`)
      try {
        const file = await open(temporary, "w")
        try {
          await file.writeFile(bytes)
          await file.sync()
        } finally {
          await file.close()
        }
        await rename(temporary, path)
      } catch (error) {
        await rm(temporary, { force: true })
        throw error
      }
    },
    catch: (error) => new SnapshotFileError({ path, message: `cannot write the snapshot: ${reason(error)}` })
  })

/** A refused snapshot names its file; anything else thrown is a file error saying what could not be done. */
const snapshotFailure = (path: string, action: "read" | "decode") => (error: unknown): SnapshotError | SnapshotFileError =>
  error instanceof SnapshotError
    ? new SnapshotError({ reason: error.reason, message: `${path}: ${error.message}` })
    : new SnapshotFileError({ path, message: `cannot ${action} the snapshot: ${reason(error)}` })

/** Reads and decodes a snapshot file. */
export const loadSnapshotFile = (path: string): Effect.Effect<SearchIndex, SnapshotFileError | SnapshotError> =>
  Effect.flatMap(readSnapshotFile(path), (bytes) => decodeSnapshotFast(bytes, snapshotFailure(path, "decode")))

// An opened snapshot keeps its file open until its page text is in memory, or else until the index is collected.
const openFiles = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd)
  } catch {
    // already closed
  }
})

/** Positional reads of an open file, as core's openSnapshot takes them. */
const fileSource = (fd: number, size: number): SnapshotSource => ({
  size,
  readInto: (target, offset, position, length) => {
    let done = 0
    while (done < length) {
      const n = readSync(fd, target, offset + done, length - done, position + done)
      if (n === 0) throw new Error(`the file ended at byte ${position + done} of ${size}`)
      done += n
    }
  }
})

/**
 * Opens a snapshot file fast (core/index/Snapshot.ts openSnapshot): everything but the page
 * text is read, every byte is checked, and the index answers at once, reading the text of
 * the hits it shows from the file. Meanwhile the page text is read into memory in the
 * background (`settled` resolves when that ends) and is kept only if the file did not change
 * since it was opened; from then on, rewriting the file in place (cp over it) cannot reach
 * the running index. Replacing it by a rename (writeSnapshotFile, `periscope index`) never can.
 */
export const openSnapshotFile = (path: string): Effect.Effect<SearchIndex, SnapshotFileError | SnapshotError> =>
  Effect.map(openInPlace(path), ({ index }) => index)

/** openSnapshotFile, with the background read's end: "held" (text in memory), "changed" (the file changed: text still read from it) or "failed". */
export const openInPlace = (
  path: string
): Effect.Effect<{ readonly index: SearchIndex; readonly settled: Promise<"held" | "changed" | "failed"> }, SnapshotFileError | SnapshotError> =>
  withFastChecksum((hashWith) => {
    const fd = openSync(path, "r")
    try {
      const stats = fstatSync(fd)
      const index = openSnapshot(fileSource(fd, stats.size), hashWith)
      openFiles.register(index, fd, index)
      return { index, settled: holdTextInMemory(index, fd, stats) }
    } catch (error) {
      closeSync(fd)
      throw error
    }
  }, snapshotFailure(path, "read"))

const TEXT_CHUNK = 8 << 20

const sameFile = (a: Stats, b: Stats) => a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs

/** Reads the page text into memory a chunk at a time, off the event loop; swaps it in if the file is as it was when opened. */
const holdTextInMemory = (index: SearchIndex, fd: number, opened: Stats): Promise<"held" | "changed" | "failed"> => {
  const pages = index.parts.pages
  const text = pages.bytes
  if (!(text instanceof TextInSource)) return Promise.resolve("held")
  const target = new Uint8Array(text.length)
  return new Promise((resolve) => {
    const next = (at: number) => {
      if (at >= target.length) {
        fstat(fd, (error, now) => {
          if (error !== null || !sameFile(opened, now)) return resolve(error === null ? "changed" : "failed")
          pages.holdInMemory(target)
          // The file is no longer read: close it now rather than when the index is collected.
          openFiles.unregister(index)
          closeSync(fd)
          resolve("held")
        })
        return
      }
      read(fd, target, at, Math.min(TEXT_CHUNK, target.length - at), text.position + at, (error, n) => {
        if (error !== null || n === 0) return resolve("failed")
        next(at + n)
      })
    }
    next(0)
  })
}

/**
 * The file beside a snapshot that marks it as the starter index (npm READMEs built on the
 * first start): the operator's first `periscope index` replaces it instead of adding to it.
 */
export const starterMarkerPath = (snapshot: string): string => `${snapshot}.starter`

/** True when the snapshot at `path` is the starter index. */
export const isStarterSnapshot = (path: string): boolean => existsSync(starterMarkerPath(path)) && existsSync(path)

/** Marks the snapshot at `path` as the starter index, or clears the mark. */
export const markStarterSnapshot = (path: string, starter: boolean): Effect.Effect<void, SnapshotFileError> =>
  Effect.tryPromise({
    try: () =>
      starter
        ? writeFile(starterMarkerPath(path), "The snapshot beside this file is Periscope's starter index; `periscope index` replaces it.\n")
        : rm(starterMarkerPath(path), { force: true }),
    catch: (error) => new SnapshotFileError({ path: starterMarkerPath(path), message: `cannot ${starter ? "write" : "remove"} the starter mark: ${reason(error)}` })
  })
