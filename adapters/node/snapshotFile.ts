/**
 * Snapshot files on disk: read one into bytes, write one atomically (a temporary file in the
 * same folder, flushed, then renamed over the target), so a reader or a crash never sees
 * half a snapshot. Decoding is core's job (core/index/Snapshot.ts); this only moves bytes.
 */
import { existsSync } from "node:fs"
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { Effect, Schema } from "effect"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import { decodeSnapshot, SnapshotError } from "../../core/index/Snapshot.ts"

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

/** Writes `bytes` to `path` through a temporary file and a rename; the folder is created when missing. */
export const writeSnapshotFile = (path: string, bytes: Uint8Array): Effect.Effect<void, SnapshotFileError> =>
  Effect.tryPromise({
    try: async () => {
      const folder = dirname(path)
      await mkdir(folder, { recursive: true })
      const temporary = join(folder, `.${basename(path)}.${process.pid}.${Date.now()}.tmp`)
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

/** Reads and decodes a snapshot file. */
export const loadSnapshotFile = (path: string): Effect.Effect<SearchIndex, SnapshotFileError | SnapshotError> =>
  readSnapshotFile(path).pipe(
    Effect.flatMap((bytes) =>
      Effect.try({
        try: () => decodeSnapshot(bytes),
        catch: (error) =>
          error instanceof SnapshotError
            ? new SnapshotError({ reason: error.reason, message: `${path}: ${error.message}` })
            : new SnapshotFileError({ path, message: `cannot decode the snapshot: ${reason(error)}` })
      })
    )
  )

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
