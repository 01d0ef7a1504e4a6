/**
 * Ways to run Periscope in tests, all real: the Node HTTP server in-process
 * on an ephemeral port (with injected backends), the Node server as a child
 * process (`npm start`'s entry), and the Deno adapter with the deno binary
 * from node_modules.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { request as httpRequest } from "node:http"
import { createServer as createNetServer } from "node:net"
import { resolve } from "node:path"
import { Duration, Effect, Exit, Layer, Scope } from "effect"
import { startNodeServer } from "../../adapters/node/nodeServer.ts"
import { nodePlatform } from "../../adapters/node/platform.ts"
import type { AppServices } from "../../core/api/HttpApp.ts"
import { appLayer } from "../../core/app/Application.ts"
import { type KeyRecord, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import type { ValidationPolicy } from "../../core/chat/ChatGateway.ts"
import type { ChatModel } from "../../core/chat/ChatModel.ts"
import type { ChatConfig } from "../../core/config/ChatConfig.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import type { ImageSearch } from "../../core/search/ImageSearch.ts"
import type { WebSearch } from "../../core/search/WebSearch.ts"

export const root = resolve(import.meta.dirname, "../..")
export const TEST_KEY = "test-key-0123456789"

export interface RunningServer {
  readonly url: string
  close(): Promise<void>
}

export interface InProcessServer extends RunningServer {
  /** Requests the express lane answered so far (adapters/node/laneServe.ts). */
  answeredInLane(): number
}

export interface InProcessOptions {
  readonly search?: Layer.Layer<WebSearch | ImageSearch>
  readonly chat?: Layer.Layer<ChatModel>
  /** The chat stack from a config file's `chat` section (real upstream client, grounded model). */
  readonly chatConfig?: ChatConfig
  readonly keys?: ReadonlyArray<KeyRecord>
  readonly streamKeepAlive?: Duration.Input
  readonly validation?: ValidationPolicy
  /** False: every route through the full stack, none through the Node adapter's express lane. */
  readonly expressLane?: boolean
}

/** The services of a fresh server, with the test key, built by the application's own composition. */
export const servicesLayer = (options: InProcessOptions = {}): Layer.Layer<AppServices> => {
  const chat: ChatConfig | undefined = options.validation === undefined
    ? options.chatConfig
    : { ...options.chatConfig, validation: { policy: options.validation.mode, retries: options.validation.retries } }
  const settings = settingsOf({
    ...(chat === undefined ? {} : { chat }),
    streamKeepAliveSeconds: Duration.toSeconds(Duration.fromInputUnsafe(options.streamKeepAlive ?? "15 seconds"))
  })
  return appLayer(settings, options.keys ?? recordsFromPlainKeys([TEST_KEY]), {
    search: { _tag: "Layer", layer: options.search ?? FixtureSearch.layer(sampleDocuments) },
    ...(options.chatConfig === undefined ? { chatModel: options.chat ?? ScriptedChat.layer(unconfiguredChat) } : {})
  }).pipe(Layer.provide(nodePlatform), Layer.orDie)
}

/** The real Node HTTP server, in this process, on an ephemeral port. */
export const startInProcess = (options: InProcessOptions = {}): Promise<InProcessServer> =>
  serveInProcess(servicesLayer(options), options.expressLane === undefined ? {} : { expressLane: options.expressLane })

/**
 * Serves the routes over the given services on 127.0.0.1 (an ephemeral port) in this process,
 * with the Node adapter's own server (express lane in front unless `expressLane` is false):
 * for tests that build their services from a config file with appLayer themselves.
 */
export const serveInProcess = async (services: Layer.Layer<AppServices>, options: { readonly expressLane?: boolean } = {}): Promise<InProcessServer> => {
  const scope = Scope.makeUnsafe()
  try {
    const server = await Effect.runPromise(
      Effect.flatMap(Layer.build(services), (context) => startNodeServer(context, { port: 0, host: "127.0.0.1", ...options })).pipe(Scope.provide(scope))
    )
    const address = server.address()
    if (typeof address !== "object" || address === null) throw new Error("expected a TCP address")
    return {
      url: `http://127.0.0.1:${address.port}`,
      answeredInLane: () => server.answeredInLane,
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}

/** A port that was free a moment ago. */
export const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const server = createNetServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolvePort(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

export interface ChildServer extends RunningServer {
  readonly child: ChildProcess
  /** Everything the process printed so far. */
  output(): string
}

/** Waits until `url`/healthz answers or the child exits. */
const waitHealthy = async (url: string, child: ChildProcess, output: () => string, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output()}`)
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })
      if (response.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`server did not become healthy in ${timeoutMs} ms:\n${output()}`)
}

/**
 * A server process on `env.PORT`, or on a port found free. A found port can be taken by another
 * process between the probe and the child's listen (tests run in parallel, and a first start
 * builds its starter index before listening): the child then exits with EADDRINUSE and is started
 * again on another port, up to three times.
 */
export const spawnServer = async (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: { readonly timeoutMs?: number; readonly waitHealthy?: boolean } = {}
): Promise<ChildServer> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnServerOnce(command, args, env, options)
    } catch (error) {
      const portTaken = env.PORT === undefined && error instanceof Error && error.message.includes("EADDRINUSE")
      if (!portTaken || attempt === 3) throw error
    }
  }
}

const spawnServerOnce = async (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: { readonly timeoutMs?: number; readonly waitHealthy?: boolean }
): Promise<ChildServer> => {
  const port = Number(env.PORT ?? (await freePort()))
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => { output += d })
  child.stderr!.on("data", (d) => { output += d })
  const url = `http://127.0.0.1:${port}`
  const server: ChildServer = {
    url,
    child,
    output: () => output,
    close: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done()
        child.once("exit", () => done())
        child.kill("SIGTERM")
        setTimeout(() => child.kill("SIGKILL"), 10_000).unref()
      })
  }
  if (options.waitHealthy !== false) {
    try {
      await waitHealthy(url, child, server.output, options.timeoutMs ?? 60_000)
    } catch (error) {
      // A server that never answered is not the caller's to stop: it was never handed over.
      child.kill("SIGKILL")
      throw error
    }
  }
  return server
}

/** `npm start`'s entry point (adapters/node/main.ts) as a child process. */
export const spawnNodeServer = (env: Record<string, string>, options?: { readonly waitHealthy?: boolean }) =>
  spawnServer(process.execPath, ["adapters/node/main.ts"], env, options)

/** The Deno adapter, run with the deno binary from node_modules. */
export const spawnDenoServer = (env: Record<string, string>) =>
  spawnServer(resolve(root, "node_modules/.bin/deno"), ["run", "--allow-net", "--allow-env", "--allow-read", "adapters/deno/main.ts"], env, {
    timeoutMs: 120_000
  })

/** Reads an SSE body into its `data:` payloads and comment lines, in order. */
export const readSse = async (response: Response): Promise<Array<string>> => {
  const text = await response.text()
  return text.split("\n\n").filter((e) => e !== "").map((e) => e.trim())
}

export const authHeaders = (key = TEST_KEY) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" })

/**
 * Posts a streaming chat request over a raw socket and destroys the socket
 * once more than `afterBytes` bytes of the answer have arrived, as a client
 * that goes away would. Resolves with `clock()` at the moment of disconnect.
 */
export const disconnectMidStream = (url: string, body: unknown, afterBytes: number, clock: () => number = () => performance.now()): Promise<number> => {
  const target = new URL(url)
  return new Promise<number>((resolve, reject) => {
    const req = httpRequest({ hostname: target.hostname, port: target.port, path: target.pathname, method: "POST", headers: authHeaders() }, (res) => {
      let received = 0
      res.on("data", (chunk: Buffer) => {
        received += chunk.length
        if (received > afterBytes) {
          const at = clock()
          req.destroy()
          resolve(at)
        }
      })
      res.on("error", () => {})
    })
    req.on("error", (e) => (/aborted|hang up/.test(e.message) ? undefined : reject(e)))
    req.end(JSON.stringify(body))
  })
}
