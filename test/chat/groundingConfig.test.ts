/** chat.grounding in the config file: defaults, overrides, and bad values named by their path. */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { groundingSettingsOf } from "../../core/app/ChatStack.ts"
import { defaultGroundingSettings } from "../../core/chat/Grounding.ts"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { decoderFor } from "../../core/schema/Decode.ts"

const decode = decoderFor(ConfigFile, "file", { unknownKeys: "error" })

describe("chat.grounding", () => {
  it("defaults when absent; given values laid over the defaults", () => {
    expect(groundingSettingsOf(undefined)).toEqual(defaultGroundingSettings)
    const file = decode({ chat: { grounding: { contextSize: "high", maxResults: { low: 2 }, maxToolRounds: 1, serverTools: true } } })
    expect(Result.isSuccess(file)).toBe(true)
    const settings = groundingSettingsOf(Result.getOrThrow(file).chat)
    expect(settings.contextSize).toBe("high")
    expect(settings.maxResults).toEqual({ low: 2, medium: 5, high: 8 })
    expect(settings.fetchTopPages).toEqual({ low: 0, medium: 2, high: 4 })
    expect(settings.maxToolRounds).toBe(1)
    expect(settings.serverTools).toBe(true)
    expect(settings.deadlineMs).toBe(8000)
  })

  const bad: ReadonlyArray<[unknown, string, RegExp]> = [
    [{ contextSize: "huge" }, "chat.grounding.contextSize", /must be low, medium or high/],
    [{ maxResults: { medium: 0 } }, "chat.grounding.maxResults.medium", /from 1 to 20/],
    [{ fetchTopPages: { high: 1.5 } }, "chat.grounding.fetchTopPages.high", /integer from 0 to 20/],
    [{ deadlineMs: 5 }, "chat.grounding.deadlineMs", /from 100 to 120000/],
    [{ maxToolRounds: 11 }, "chat.grounding.maxToolRounds", /from 0 to 10/],
    [{ serverTools: "yes" }, "chat.grounding.serverTools", /must be a boolean/],
    [{ maxRounds: 3 }, "chat.grounding.maxRounds", /./]
  ]
  for (const [grounding, path, rule] of bad) {
    it(`${JSON.stringify(grounding)} names ${path}`, () => {
      const result = decode({ chat: { grounding } })
      if (!Result.isFailure(result)) throw new Error("expected a failure")
      const error = result.failure
      expect(error.path).toBe(path)
      expect(error.message).toMatch(rule)
    })
  }
})
