/**
 * A first start that stays home: `npm start`'s entry (adapters/node/main.ts, a child process)
 * with no provider configured builds its starter index and answers a grounded chat from it,
 * the pages read from the index's stored text. The process is started with a probe
 * (test/support/outboundProbe.ts) that records every DNS lookup and TCP connect it makes:
 * there must be none. The probe is checked first, on a process that does reach out.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { authHeaders, spawnNodeServer, TEST_KEY } from "../support/servers.ts"

const probe = resolve(import.meta.dirname, "../support/outboundProbe.ts")
const work = mkdtempSync(join(tmpdir(), "periscope-offline-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const attempts = (log: string) => readFileSync(log, "utf8").split("\n").filter((line) => line !== "")

describe("the outbound probe", () => {
  it("records a lookup and a connect made through fetch", () => {
    const log = join(work, "probe-check.log")
    writeFileSync(log, "")
    // A closed port on loopback: the attempt is made and refused at once.
    const script = "await fetch('http://localhost:65500/').catch(() => {})"
    const run = spawnSync(process.execPath, ["--import", probe, "--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { ...process.env, PERISCOPE_OUTBOUND_LOG: log }
    })
    expect(run.status).toBe(0)
    expect(attempts(log)).toEqual(expect.arrayContaining(["lookup localhost", "connect localhost:65500"]))
  })
})

describe("grounded chat with no provider configured", () => {
  it("answers from the starter index's stored text, quoting whole sentences, with no lookup and no connection", async () => {
    const log = join(work, "server.log")
    writeFileSync(log, "")
    const dataDir = join(work, "data")
    const server = await spawnNodeServer({
      PERISCOPE_DATA_DIR: dataDir,
      PERISCOPE_API_KEYS: TEST_KEY,
      PERISCOPE_CONFIG: "",
      NODE_OPTIONS: `--import ${probe}`,
      PERISCOPE_OUTBOUND_LOG: log
    })
    try {
      expect(server.output()).toContain("built a starter index")
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: authHeaders(),
        body: JSON.stringify({ model: "periscope-grounded", messages: [{ role: "user", content: "how do I show a progress bar in the terminal" }] })
      })
      expect(response.status).toBe(200)
      const body = await response.json() as any
      expect(body.periscope_grounding).toMatchObject({ retrieval: "ok", search_context_size: "medium", sources: 5, pages_read: 2 })
      expect(body.search_results[0].url).toBe("https://www.npmjs.com/package/cli-progress")

      // Every quote is one or two whole sentences: it starts like a sentence and ends with its stop.
      const content: string = body.choices[0].message.content
      const quotes = [...content.matchAll(/^\d+\. .*?: "(.+)" \[\d+\]$/gm)].map((m) => m[1]!)
      expect(quotes.length).toBeGreaterThanOrEqual(2)
      for (const quote of quotes) {
        expect(quote, quote).toMatch(/^["'(]?[\p{L}\p{N}]/u)
        expect(quote, quote).not.toMatch(/…|\.\.\.$/)
      }
      expect(content).toContain("First we create a ProgressBar, giving it a format string as well as the total")

      expect(attempts(log)).toEqual([])
    } finally {
      await server.close()
    }
  }, 60_000)
})
