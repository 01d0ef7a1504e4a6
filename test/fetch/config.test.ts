/**
 * The config file's fetch and jobs sections: every setting decodes, a bad value is refused naming its
 * path and rule, an unknown key names the one meant, and the defaults are the README's.
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { fetchSettingsOf } from "../../core/config/FetchConfig.ts"
import { jobLimitsOf } from "../../core/config/JobsConfig.ts"
import { decoderFor } from "../../core/schema/Decode.ts"

const decode = decoderFor(ConfigFile, "file", { unknownKeys: "error" })
const message = (input: unknown) => {
  const result = decode(input)
  return Result.isFailure(result) ? result.failure.message : "decoded"
}

describe("config: fetch", () => {
  it("decodes every setting", () => {
    const result = decode({
      fetch: {
        allowPrivateAddresses: false,
        allowHosts: ["intranet.example", "10.0.0.5:8080", "[fd00::5]:443", "127.0.0.1"],
        timeoutMs: 5000,
        maxBytes: 2_000_000,
        cacheTtlSeconds: 0,
        cacheMaxEntries: 100,
        addToIndex: true,
        userAgent: "MyAgent/1.0",
        maxHtmlDepth: 256,
        maxHtmlElements: 50_000,
        maxPdfDecodedBytes: 16_777_216,
        maxPdfPages: 200
      },
      jobs: { workers: 2, memoryMb: 256, queue: 8, deadlineMs: 5000, nice: 0 }
    })
    expect(Result.isSuccess(result)).toBe(true)
  })

  it.each([
    [{ timeoutMs: 0 }, "fetch.timeoutMs: must be an integer from 1 to 300000, got 0"],
    [{ timeoutMs: "5s" }, "fetch.timeoutMs: must be an integer from 1 to 300000, got \"5s\""],
    [{ maxBytes: 10 }, "fetch.maxBytes: must be an integer from 1024 to 1073741824, got 10"],
    [{ cacheTtlSeconds: -1 }, "fetch.cacheTtlSeconds: must be an integer from 0 to 604800 (seconds), got -1"],
    [{ cacheMaxEntries: 1.5 }, "fetch.cacheMaxEntries: must be an integer from 0 to 1000000, got 1.5"],
    [{ allowPrivateAddresses: "yes" }, "fetch.allowPrivateAddresses: must be a boolean, got \"yes\""],
    [{ allowHosts: "intranet" }, "fetch.allowHosts: must be an array of hosts, got \"intranet\""],
    [{ allowHosts: ["http://intranet/"] }, "fetch.allowHosts[0]: must be a host name or address, with an optional :port, got \"http://intranet/\""],
    [{ allowHosts: ["ok.example", "a b"] }, "fetch.allowHosts[1]: must be a host name or address, with an optional :port, got \"a b\""],
    [{ addToIndex: 1 }, "fetch.addToIndex: must be a boolean, got 1"],
    [{ userAgent: "" }, "fetch.userAgent: must be a non-empty string of at most 256 characters, got \"\""],
    [{ maxHtmlDepth: 8 }, "fetch.maxHtmlDepth: must be an integer from 16 to 100000, got 8"],
    [{ maxHtmlElements: 10.5 }, "fetch.maxHtmlElements: must be an integer from 1000 to 10000000, got 10.5"],
    [{ maxPdfDecodedBytes: 1024 }, "fetch.maxPdfDecodedBytes: must be an integer from 1048576 to 4294967296, got 1024"],
    [{ maxPdfPages: 0 }, "fetch.maxPdfPages: must be an integer from 1 to 1000000, got 0"]
  ])("refuses %j naming the path", (fetch, expected) => {
    expect(message({ fetch }).startsWith(expected.split(", got")[0]!), message({ fetch })).toBe(true)
  })

  it.each([
    [{ workers: 0 }, "jobs.workers: must be an integer from 1 to 64, got 0"],
    [{ memoryMb: 8 }, "jobs.memoryMb: must be an integer from 32 to 16384, got 8"],
    [{ queue: -1 }, "jobs.queue: must be an integer from 0 to 100000, got -1"],
    [{ deadlineMs: "1s" }, "jobs.deadlineMs: must be an integer from 100 to 300000, got \"1s\""],
    [{ nice: 20 }, "jobs.nice: must be an integer from 0 to 19, got 20"],
    [{ threads: 2 }, "jobs.threads: "]
  ])("refuses jobs %j naming the path", (jobs, expected) => {
    expect(message({ jobs }).startsWith(expected.split(", got")[0]!), message({ jobs })).toBe(true)
  })

  it("job defaults: 512 MB per thread, 32 waiting, 15 s, nice 10, threads left to the adapter", () => {
    expect(jobLimitsOf(undefined)).toEqual({ workers: undefined, memoryMb: 512, queue: 32, deadlineMs: 15_000, nice: 10 })
  })

  it("an unknown key is named", () => {
    expect(message({ fetch: { timeout: 5 } })).toMatch(/^fetch\.timeout: /)
  })

  it("defaults: private addresses refused, 15 s, 10 MiB, 1 h, 500 pages, not added to the index, page bounds", () => {
    expect(fetchSettingsOf(undefined)).toMatchObject({
      allow: false,
      timeoutMs: 15_000,
      maxBytes: 10 * 1024 * 1024,
      cacheTtlMs: 3_600_000,
      cacheMaxEntries: 500,
      addToIndex: false,
      userAgent: "Periscope/0.1 (webFetch)",
      page: { maxHtmlDepth: 512, maxHtmlElements: 100_000, maxPdfDecodedBytes: 64 * 1024 * 1024, maxPdfPages: 1000 },
      render: "auto"
    })
    expect(fetchSettingsOf({ allowHosts: ["a.example"] }).allow).toEqual(["a.example"])
    expect(fetchSettingsOf({ allowHosts: ["a.example"], allowPrivateAddresses: true }).allow).toBe(true)
  })
})
