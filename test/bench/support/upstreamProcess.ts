/**
 * The mock upstream (test/support/mockUpstream.ts) in a process of its own, for benches that time
 * a gateway's work apart from the upstream's. It listens on a port it picks and prints its URL
 * once it does, so nothing polls for it; it is stopped when this process exits, however it exits.
 */
import { spawn } from "node:child_process"
import { resolve } from "node:path"

export interface UpstreamProcess {
  /** The OpenAI-compatible base URL, ending in /v1. */
  readonly url: string
  readonly pid: number
}

/**
 * `chunkDelayMs` paces a streamed answer as a model server does, one event per write that far
 * apart; without it the whole answer goes out in one write.
 */
export const startUpstreamProcess = (words: number, options: { readonly timeoutMs?: number; readonly chunkDelayMs?: number } = {}): Promise<UpstreamProcess> =>
  new Promise((done, fail) => {
    const timeoutMs = options.timeoutMs ?? 30_000
    const child = spawn(process.execPath, ["test/support/mockUpstream.ts", "--port", "0", "--words", String(words), "--chunk-delay-ms", String(options.chunkDelayMs ?? 0)], {
      cwd: resolve(import.meta.dirname, "../../.."),
      stdio: ["ignore", "pipe", "pipe"]
    })
    process.on("exit", () => child.kill("SIGTERM"))
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGTERM")
      fail(new Error(`the mock upstream did not start in ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    child.stderr.on("data", (d) => { output += d })
    child.stdout.on("data", (d) => {
      output += d
      const line = /^(http:\/\/\S+\/v1)$/m.exec(output)
      if (line === null) return
      clearTimeout(timer)
      done({ url: line[1]!, pid: child.pid! })
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      fail(new Error(`the mock upstream exited with ${code}:\n${output}`))
    })
  })
