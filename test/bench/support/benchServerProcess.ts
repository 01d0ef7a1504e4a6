/**
 * A bench's server script as a child process (http.ts, mcp.ts, wires.ts): `node <args>` from the
 * project's root, `$PORT` in the arguments replaced by a free port (or the one given), ready once a
 * POST of `probe` is answered. Every try is bounded (a server that accepts and never answers must
 * not hang the bench), and every child still running when the bench exits is stopped.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { resolve } from "node:path"
import { freePort } from "../../support/servers.ts"
import { benchHeaders, type BenchRequest } from "./benchRequests.ts"

const root = resolve(import.meta.dirname, "../../..")

const children = new Set<ChildProcess>()
process.on("exit", () => {
  for (const child of children) child.kill("SIGTERM")
})

export interface BenchServer {
  readonly name: string
  /** http://127.0.0.1:<port>, without a path. */
  readonly url: string
  readonly pid: number
  readonly stop: () => void
}

export const startBenchServer = async (
  name: string,
  args: ReadonlyArray<string>,
  probe: BenchRequest,
  options: {
    readonly env?: Record<string, string>
    readonly port?: number
    /** Which answers to the probe mean ready (default: any). */
    readonly ready?: (response: Response) => boolean
  } = {}
): Promise<BenchServer> => {
  const port = options.port ?? await freePort()
  const child = spawn(process.execPath, args.map((a) => a.replace("$PORT", String(port))), {
    cwd: root,
    env: { ...process.env, ...options.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  const stop = () => {
    child.kill("SIGTERM")
    children.delete(child)
  }
  let output = ""
  child.stdout!.on("data", (d) => { output += d })
  child.stderr!.on("data", (d) => { output += d })
  const url = `http://127.0.0.1:${port}`
  const ready = options.ready ?? (() => true)
  for (let i = 0; i < 200; i++) {
    const answered = await fetch(url + probe.path, { method: "POST", headers: benchHeaders, body: probe.body, signal: AbortSignal.timeout(2000) })
      .then(ready, () => false)
    if (answered) return { name, url, pid: child.pid!, stop }
    await new Promise((r) => setTimeout(r, 100))
  }
  stop()
  throw new Error(`${name} did not start:\n${output}`)
}
