/**
 * A real redis-server (the Debian package) on a free loopback port, for the
 * shared-state tests: started, stopped (a crash as a client sees it: the
 * connection drops) and started again on the same port. Without the binary the
 * tests skip with a printed reason; under CI=true they fail instead.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { freePort } from "../support/servers.ts"

export const redisServerPath = (): string | undefined => {
  try {
    return execFileSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" }).trim() || undefined
  } catch {
    return undefined
  }
}

/** Whether the Redis tests run here; prints why not, and throws under CI where they must run. */
export const redisAvailable = (): boolean => {
  if (redisServerPath() !== undefined) return true
  const reason = "redis-server is not installed (apt-get install redis-server): skipping the shared-state tests"
  if (process.env.CI === "true") throw new Error(`${reason} - but CI=true requires them`)
  console.warn(reason)
  return false
}

export interface RedisServer {
  readonly port: number
  readonly url: string
  /** Kills the server (SIGKILL: no goodbye to clients) and waits for it to exit. */
  kill(): Promise<void>
  /** Starts it again on the same port (empty: nothing is persisted). */
  restart(): Promise<void>
  stop(): Promise<void>
}

const launch = (port: number): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(redisServerPath()!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes"], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${output}`)), 10_000)
    child.stdout!.on("data", (data: Buffer) => {
      output += data.toString()
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer)
        resolve(child)
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited with ${code}:\n${output}`))
    })
  })

const exited = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill(signal)
  })

export const startRedis = async (): Promise<RedisServer> => {
  const port = await freePort()
  let child: ChildProcess | undefined = await launch(port)
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill: async () => {
      if (child !== undefined) await exited(child, "SIGKILL")
      child = undefined
    },
    restart: async () => {
      child = await launch(port)
    },
    stop: async () => {
      if (child !== undefined) await exited(child, "SIGTERM")
      child = undefined
    }
  }
}
