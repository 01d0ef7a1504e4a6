/**
 * The config file's fetch section: every setting decodes, a bad value is refused naming its
 * path and rule, an unknown key names the one meant, and the defaults are the README's.
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { fetchSettingsOf } from "../../core/config/FetchConfig.ts"
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
        userAgent: "MyAgent/1.0"
      }
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
    [{ userAgent: "" }, "fetch.userAgent: must be a non-empty string of at most 256 characters, got \"\""]
  ])("refuses %j naming the path", (fetch, expected) => {
    expect(message({ fetch }).startsWith(expected.split(", got")[0]!), message({ fetch })).toBe(true)
  })

  it("an unknown key is named", () => {
    expect(message({ fetch: { timeout: 5 } })).toMatch(/^fetch\.timeout: /)
  })

  it("defaults: private addresses refused, 15 s, 10 MiB, 1 h, 500 pages, not added to the index", () => {
    expect(fetchSettingsOf(undefined)).toEqual({
      allow: false,
      timeoutMs: 15_000,
      maxBytes: 10 * 1024 * 1024,
      cacheTtlMs: 3_600_000,
      cacheMaxEntries: 500,
      addToIndex: false,
      userAgent: "Periscope/0.1 (webFetch)"
    })
    expect(fetchSettingsOf({ allowHosts: ["a.example"] }).allow).toEqual(["a.example"])
    expect(fetchSettingsOf({ allowHosts: ["a.example"], allowPrivateAddresses: true }).allow).toBe(true)
  })
})
