/**
 * search.expansion and chat.grounding.expand in the config file: good values decode and reach
 * the engine's choice and grounding's settings; bad ones are refused naming the field and the rule.
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { groundingSettingsOf } from "../../core/app/ChatStack.ts"
import { searchChoiceOf } from "../../core/app/SearchBackend.ts"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { defaultExpansionSettings } from "../../core/index/Expansion.ts"
import { decoderFor } from "../../core/schema/Decode.ts"

const decode = decoderFor(ConfigFile, "file", { unknownKeys: "error" })
const failure = (config: unknown): string => {
  const decoded = decode(config)
  if (Result.isSuccess(decoded)) throw new Error("expected a refusal")
  return (decoded.failure as { message: string }).message
}

describe("search.expansion", () => {
  it("reaches the engine over the defaults", () => {
    const config = { search: { expansion: { documents: 5, originalWeight: 0.7 } } }
    expect(Result.isSuccess(decode(config))).toBe(true)
    const choice = searchChoiceOf(settingsOf(config).search, "/data/index.snapshot")
    expect(choice).toMatchObject({ _tag: "Engine", expansion: { documents: 5, terms: defaultExpansionSettings.terms, originalWeight: 0.7 } })
    expect(searchChoiceOf(settingsOf({}).search, "/data/index.snapshot")).not.toHaveProperty("expansion")
  })

  it("refuses bad values naming the field and the rule", () => {
    expect(failure({ search: { expansion: { documents: 0 } } })).toMatch(/search\.expansion\.documents.*must be an integer from 1 to 100/)
    expect(failure({ search: { expansion: { terms: 2.5 } } })).toMatch(/search\.expansion\.terms.*must be an integer from 1 to 40/)
    expect(failure({ search: { expansion: { originalWeight: 0 } } })).toMatch(/search\.expansion\.originalWeight.*must be a number above 0 and at most 1/)
    expect(failure({ search: { expansion: { depth: 3 } } })).toMatch(/search\.expansion\.depth/)
  })
})

describe("chat.grounding.expand", () => {
  it("is off unless set, and refused when not a boolean", () => {
    expect(groundingSettingsOf(undefined).expand).toBe(false)
    expect(groundingSettingsOf({ grounding: { expand: true } }).expand).toBe(true)
    expect(failure({ chat: { grounding: { expand: "yes" } } })).toMatch(/chat\.grounding\.expand.*must be a boolean/)
  })
})
