/**
 * `npm start`'s entry as a real child process: the key made at first start,
 * settings validation naming the setting, and graceful shutdown on SIGTERM (the request in flight finishes, new
 * requests are answered 503 meanwhile).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { hashKey } from "../../core/auth/KeyRecord.ts"
import { type ChildServer, freePort, spawnNodeServer } from "../support/servers.ts"

const dirs: Array<string> = []
const servers: Array<ChildServer> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-node-"))
  dirs.push(dir)
  return dir
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const exited = (server: ChildServer) =>
  new Promise<number | null>((resolve) => {
    if (server.child.exitCode !== null) return resolve(server.child.exitCode)
    server.child.once("exit", (code) => resolve(code))
  })

const search = (url: string, key: string) =>
  fetch(`${url}/api/search/webSearch`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ keywords: "chat" })
  })

describe("first start", () => {
  it("makes a key, prints it once and stores only its hash", async () => {
    const dataDir = tempDir()
    const first = await spawnNodeServer({ PERISCOPE_DATA_DIR: dataDir })
    servers.push(first)
    const key = first.output().match(/psk_[A-Za-z0-9_-]{43}/)?.[0]
    expect(key).toBeDefined()
    expect((await search(first.url, key!)).status).toBe(200)
    expect((await search(first.url, key!.slice(0, -1) + "x")).status).toBe(401)

    const file = join(dataDir, "keys.json")
    const stored = readFileSync(file, "utf8")
    expect(stored).not.toContain(key!)
    expect(JSON.parse(stored)).toEqual({ keys: [{ name: "generated", sha256: hashKey(key!), requestsPerMinute: 1000 }] })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    await first.close()
    servers.pop()

    const second = await spawnNodeServer({ PERISCOPE_DATA_DIR: dataDir })
    servers.push(second)
    expect(second.output()).not.toMatch(/psk_/)
    expect((await search(second.url, key!)).status).toBe(200)
  })

  it("does not make a key when keys are configured", async () => {
    const dataDir = tempDir()
    const server = await spawnNodeServer({ PERISCOPE_DATA_DIR: dataDir, PERISCOPE_API_KEYS: "a-key,another-key" })
    servers.push(server)
    expect(server.output()).not.toMatch(/psk_/)
    expect(existsSync(join(dataDir, "keys.json"))).toBe(false)
    expect((await search(server.url, "another-key")).status).toBe(200)
  })

  it("reads hashed keys with their own limits from PERISCOPE_KEYS_FILE", async () => {
    const dir = tempDir()
    const keysFile = join(dir, "keys.json")
    writeFileSync(keysFile, JSON.stringify({ keys: [{ name: "ci", sha256: hashKey("ci-secret"), requestsPerMinute: 1 }] }))
    const server = await spawnNodeServer({ PERISCOPE_DATA_DIR: dir, PERISCOPE_KEYS_FILE: keysFile })
    servers.push(server)
    expect((await search(server.url, "ci-secret")).status).toBe(200)
    expect((await search(server.url, "ci-secret")).status).toBe(429)
    expect(server.output()).not.toContain("ci-secret")
  })
})

describe("settings are validated at start", () => {
  const fails = async (env: Record<string, string>, message: RegExp) => {
    const server = await spawnNodeServer({ PERISCOPE_DATA_DIR: tempDir(), ...env }, { waitHealthy: false })
    servers.push(server)
    expect(await exited(server)).toBe(1)
    expect(server.output()).toMatch(message)
  }
  it("names PORT", () => fails({ PORT: "99999" }, /Invalid configuration: PORT: must be a value between 1 and 65535/))
  it("names PERISCOPE_API_KEYS", () => fails({ PERISCOPE_API_KEYS: " , " }, /Invalid configuration: PERISCOPE_API_KEYS: must list at least one key/))
  it("names a missing keys file", () => fails({ PERISCOPE_KEYS_FILE: "/nonexistent/keys.json" }, /PERISCOPE_KEYS_FILE \(\/nonexistent\/keys.json\): cannot be read: ENOENT/))
  it("names the field of a bad keys file", () => {
    const file = join(tempDir(), "keys.json")
    writeFileSync(file, JSON.stringify({ keys: [{ name: "a", sha256: "plain-key" }] }))
    return fails({ PERISCOPE_KEYS_FILE: file }, /PERISCOPE_KEYS_FILE .*: keys\[0\]\.sha256: must be 64 lowercase hex digits/)
  })
  it("names the field of a bad config file", () => {
    const file = join(tempDir(), "periscope.json")
    writeFileSync(file, JSON.stringify({ port: "8080" }))
    return fails({ PERISCOPE_CONFIG: file }, /PERISCOPE_CONFIG .*: port: must be an integer from 1 to 65535, got "8080"/)
  })
  it("names a chat target that points at no upstream", () => {
    const file = join(tempDir(), "periscope.json")
    writeFileSync(file, JSON.stringify({ chat: { upstreams: { a: { baseUrl: "http://127.0.0.1:9/v1" } }, models: [{ name: "m", targets: [{ upstream: "b", model: "x" }] }] } }))
    return fails({ PERISCOPE_CONFIG: file }, /PERISCOPE_CONFIG .*: chat\.models\[0\]\.targets\[0\]\.upstream: names no upstream in chat\.upstreams \("b"\)/)
  })
  it("names an upstream key variable that is not set", () => {
    const file = join(tempDir(), "periscope.json")
    writeFileSync(file, JSON.stringify({ chat: { upstreams: { a: { baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "PERISCOPE_TEST_UNSET_KEY" } }, models: [{ name: "m", targets: [{ upstream: "a", model: "x" }] }] } }))
    return fails({ PERISCOPE_CONFIG: file }, /Invalid configuration: chat\.upstreams\.a\.apiKeyEnv: names PERISCOPE_TEST_UNSET_KEY, which is not set/)
  })
  it("names an unknown config key, with the declared key it most likely meant", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ prot: 8080 }, /PERISCOPE_CONFIG .*: prot: is not a known key \(did you mean "port"\?\)/],
      [{ search: { backnd: "engine" } }, /search\.backnd: is not a known key \(did you mean "backend"\?\)/],
      [{ chat: { upstreams: { a: { baseUrl: "http://127.0.0.1:9/v1", apikeyEnv: "X" } } } }, /chat\.upstreams\.a\.apikeyEnv: is not a known key \(did you mean "apiKeyEnv"\?\)/],
      [{ somethingElse: true }, /somethingElse: is not a known key, got true/]
    ]
    for (const [config, message] of cases) {
      const file = join(tempDir(), "periscope.json")
      writeFileSync(file, JSON.stringify(config))
      await fails({ PERISCOPE_CONFIG: file }, message)
    }
  })
  it("names an unknown key in the keys file", () => {
    const file = join(tempDir(), "keys.json")
    writeFileSync(file, JSON.stringify({ keys: [{ name: "a", sha256: "a".repeat(64), requestsPerMinut: 5 }] }))
    return fails({ PERISCOPE_KEYS_FILE: file }, /keys\[0\]\.requestsPerMinut: is not a known key \(did you mean "requestsPerMinute"\?\)/)
  })
  it("names a config file that is not JSON", () => {
    const file = join(tempDir(), "periscope.json")
    writeFileSync(file, "port = 8080")
    return fails({ PERISCOPE_CONFIG: file }, /PERISCOPE_CONFIG .*: file: is not valid JSON/)
  })
})

describe("graceful shutdown", () => {
  it("finishes the request in flight, answers new requests 503 while it does, exits 0", async () => {
    const port = await freePort()
    const server = await spawnNodeServer({ PERISCOPE_DATA_DIR: tempDir(), PERISCOPE_API_KEYS: "k", PORT: String(port) })
    servers.push(server)
    const body = JSON.stringify({ keywords: "web search" })
    const failures: Array<unknown> = []
    // A request in flight: headers sent, body still uploading.
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest({
        host: "127.0.0.1", port, path: "/api/search/webSearch", method: "POST",
        headers: { authorization: "Bearer k", "content-type": "application/json", "content-length": Buffer.byteLength(body) }
      }, (res) => {
        let text = ""
        res.on("data", (d) => { text += d })
        res.on("end", () => resolve({ status: res.statusCode!, text }))
      })
      req.on("error", reject)
      req.write(body.slice(0, 5))
      setTimeout(() => {
        server.child.kill("SIGTERM")
        setTimeout(async () => {
          // A new request during the grace period is refused with the reason (or its connection is).
          try {
            const late = await search(`http://127.0.0.1:${port}`, "k")
            if (late.status !== 503) failures.push(`a request after SIGTERM got ${late.status}`)
            const payload = await late.json() as { success: boolean; message: string }
            if (payload.success !== false || !/shutting down/i.test(payload.message)) failures.push(payload)
          } catch {
            // the listener already closed: also a refusal
          }
          req.end(body.slice(5))
        }, 500)
      }, 200)
    })
    const { status, text } = await response
    expect(failures).toEqual([])
    expect(status).toBe(200)
    expect(JSON.parse(text).data.organic.length).toBeGreaterThan(0)
    expect(await exited(server)).toBe(0)
  })
})
