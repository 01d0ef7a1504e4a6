/**
 * The fetch settings of many-URL reads and site maps: they decode, a bad value is refused naming
 * its path and rule, and the defaults are the documented ones.
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

describe("config: fetch.perHostConcurrency, fetch.mapMaxUrls, fetch.mapTimeoutMs", () => {
  it("decode and reach the settings; absent, the defaults", () => {
    expect(message({ fetch: { perHostConcurrency: 8, mapMaxUrls: 200, mapTimeoutMs: 5000 } })).toBe("decoded")
    expect(fetchSettingsOf({ perHostConcurrency: 8, mapMaxUrls: 200, mapTimeoutMs: 5000 })).toMatchObject({ perHost: 8, mapMaxUrls: 200, mapTimeoutMs: 5000 })
    expect(fetchSettingsOf(undefined)).toMatchObject({ perHost: 4, mapMaxUrls: 5000, mapTimeoutMs: 30_000 })
  })

  it.each([
    [{ perHostConcurrency: 0 }, "fetch.perHostConcurrency: must be an integer from 1 to 20, got 0"],
    [{ perHostConcurrency: 21 }, "fetch.perHostConcurrency: must be an integer from 1 to 20, got 21"],
    [{ mapMaxUrls: 100_001 }, "fetch.mapMaxUrls: must be an integer from 1 to 100000, got 100001"],
    [{ mapTimeoutMs: 999 }, "fetch.mapTimeoutMs: must be an integer from 1000 to 300000, got 999"],
    [{ mapTimeoutMs: "30s" }, "fetch.mapTimeoutMs: must be an integer from 1000 to 300000, got \"30s\" (a string)"]
  ])("%j is refused naming the setting", (fetch, expected) => {
    expect(message({ fetch })).toBe(expected)
  })
})
