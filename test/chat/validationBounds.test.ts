/**
 * The bounds on tool-call and structured-output validation, and the checks
 * that replace the library's slow ones, held to the library's own answers:
 * - `uniqueItems` decided linearly gives the verdict @cfworker/json-schema
 *   gives, on random arrays under the keyword in every position it can sit;
 * - the `url` format on RE2 accepts exactly the strings the library's regex
 *   accepts (on strings short enough for that regex to finish);
 * - each bound (argument, repair, schema size and depth, uniqueItems length)
 *   refuses with its setting named, and the config file takes each setting.
 */
import { format as libraryFormats, Validator } from "@cfworker/json-schema"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { validationPolicyOf } from "../../core/app/ChatStack.ts"
import { patternSize } from "../../core/chat/PatternSize.ts"
import { boundedFormats } from "../../core/chat/SchemaFormats.ts"
import { contentJudge, requestSchemaProblem, ToolCatalog } from "../../core/chat/ToolValidation.ts"
import { PAIRWISE_TEXT } from "../../core/chat/UniqueItems.ts"
import { defaultValidationLimits, jsonExtent, type ValidationLimits } from "../../core/chat/ValidationLimits.ts"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { decoderFor } from "../../core/schema/Decode.ts"
import { seeded } from "../index/support.ts"

const call = (args: string, name = "f") => ({ id: "c1", type: "function" as const, function: { name, arguments: args } })
const catalog = (parameters: Record<string, unknown>, limits: Partial<ValidationLimits> = {}) =>
  new ToolCatalog([{ type: "function", function: { name: "f", parameters } }], { ...defaultValidationLimits, ...limits })

describe("uniqueItems gives the library's verdict, in linear time", () => {
  const random = seeded(54)
  const pick = <A>(values: ReadonlyArray<A>): A => values[Math.floor(random() * values.length)]!
  // Items that are equal to the library in ways a naive key would miss (key order) or invent (1 and "1").
  const items: ReadonlyArray<unknown> = [1, 1.0, "1", 2, true, null, "a", [1, 2], [2, 1], { a: 1, b: 2 }, { b: 2, a: 1 }, { a: [1, { c: null }] }, { a: [1, { c: null }] }, [], {}, 0, -0]
  const array = (): Array<unknown> => Array.from({ length: Math.floor(random() * 6) }, () => pick(items))
  // Past the length below which items are compared pair by pair; duplicates come up about half the time.
  const longArray = (): Array<unknown> =>
    Array.from({ length: 17 + Math.floor(random() * 8) }, () => (random() < 0.97 ? Math.floor(random() * 4000) : pick(items)))
  const unique = { type: "array", uniqueItems: true }
  // Third: false where the keyword never applies, so every value passes both.
  const schemas: ReadonlyArray<[string, Record<string, unknown>, () => unknown, boolean?]> = [
    ["at the root", unique, array],
    ["in a property", { type: "object", properties: { xs: unique } }, () => ({ xs: array() })],
    ["in a property, arrays of 17 items or more", { type: "object", properties: { xs: unique } }, () => ({ xs: longArray() })],
    ["in anyOf, arrays of 17 items or more", { anyOf: [unique, { type: "array", maxItems: 20 }] }, longArray],
    ["in items", { type: "array", items: unique }, () => [array(), array()]],
    ["in prefixItems and items", { type: "array", prefixItems: [unique], items: { type: "array", maxItems: 3 } }, () => [array(), array()]],
    ["in draft-07 tuple items and additionalItems", { $schema: "http://json-schema.org/draft-07/schema#", type: "array", items: [{ type: "array" }], additionalItems: unique }, () => [array(), array()]],
    ["behind a $ref", { type: "object", properties: { xs: { $ref: "#/$defs/set" } }, $defs: { set: unique } }, () => ({ xs: array() })],
    ["beside a draft-07 $ref it overrides", { $schema: "http://json-schema.org/draft-07/schema#", definitions: { any: { type: "array" } }, $ref: "#/definitions/any", uniqueItems: true }, array, false],
    ["in a recursive tree", { $defs: { node: { type: "object", properties: { tags: unique, kids: { type: "array", items: { $ref: "#/$defs/node" } } } } }, $ref: "#/$defs/node" }, () => ({ tags: array(), kids: [{ tags: array() }, { tags: array(), kids: [{ tags: array() }] }] })],
    ["in allOf", { allOf: [{ type: "array" }, unique] }, array],
    ["in anyOf", { anyOf: [unique, { type: "array", maxItems: 2 }] }, array],
    ["in oneOf", { oneOf: [unique, { type: "array", minItems: 3 }] }, array],
    ["under not", { not: unique }, array],
    ["in if/then/else", { if: { type: "array", maxItems: 2 }, then: unique, else: { not: unique } }, array],
    ["in contains", { type: "array", contains: unique }, () => [array(), array()]],
    ["in additionalProperties", { type: "object", properties: { a: { type: "string" } }, additionalProperties: unique }, () => ({ a: "x", b: array(), c: array() })],
    ["in patternProperties", { type: "object", patternProperties: { "^x": unique } }, () => ({ x1: array(), y: array() })],
    ["in dependentSchemas", { type: "object", dependentSchemas: { a: { properties: { b: unique } } } }, () => (random() < 0.5 ? { a: 1, b: array() } : { b: array() })],
    ["in unevaluatedItems", { type: "array", prefixItems: [{}], unevaluatedItems: unique }, () => [array(), array()]]
  ]
  for (const [where, schema, instance, applies = true] of schemas) {
    it(`${where}`, () => {
      const ours = catalog(schema)
      const library = new Validator(schema as never, schema.$schema === undefined ? "2020-12" : "7", false)
      let invalid = 0
      for (let i = 0; i < 300; i++) {
        const value = instance()
        const expected = library.validate(value).valid
        // Short text is left to the library's pairwise check; padded past PAIRWISE_TEXT, the same value goes through the pass.
        for (const text of [JSON.stringify(value), `${JSON.stringify(value)}${" ".repeat(PAIRWISE_TEXT)}`]) {
          const verdict = ours.check(call(text))
          if (verdict.ok !== expected) throw new Error(`${text.trim()} (${text.length} characters): ours ${JSON.stringify(verdict)}, library ${expected}`)
        }
        if (!expected) invalid++
      }
      // Both verdicts came up (where the keyword applies): the comparison said something.
      if (applies) expect(invalid).toBeGreaterThan(0)
      else expect(invalid).toBe(0)
      expect(invalid).toBeLessThan(300)
    })
  }

  it("names the duplicates as the library does", () => {
    const value = { xs: ["a", { k: 1, j: 2 }, "b", "a", { j: 2, k: 1 }] }
    for (const text of [JSON.stringify(value), `${JSON.stringify(value)}${" ".repeat(PAIRWISE_TEXT)}`]) {
      expect(catalog({ type: "object", properties: { xs: unique } }).check(call(text))).toEqual({ ok: false, error: "arguments do not match the schema of f: xs: Duplicate items at indexes 0 and 3." })
    }
  })

  it("checks 60,000 unique numbers (bounds raised) and finds the one duplicate at the end", () => {
    const raised = catalog({ type: "object", properties: { xs: unique } }, { maxArgumentBytes: 4 * 1024 * 1024, maxUniqueItems: 100_000 })
    const numbers = Array.from({ length: 60_000 }, (_, i) => i)
    expect(raised.check(call(JSON.stringify({ xs: numbers }))).ok).toBe(true)
    expect(raised.check(call(JSON.stringify({ xs: [...numbers, 59_999] })))).toEqual({ ok: false, error: "arguments do not match the schema of f: xs: Duplicate items at indexes 59999 and 60000." })
  })

  it("refuses an array over maxUniqueItems, naming the setting", () => {
    const verdict = catalog({ type: "object", properties: { xs: unique } }, { maxArgumentBytes: 4 * 1024 * 1024 }).check(call(JSON.stringify({ xs: Array.from({ length: 60_000 }, (_, i) => i) })))
    expect(verdict).toEqual({ ok: false, error: "arguments do not match the schema of f: xs: has 60000 items; uniqueItems is checked on arrays of at most 10000 (chat.validation.maxUniqueItems)" })
  })

  it("refuses duplicates in a long array under anyOf rather than compare every pair", () => {
    const numbers = Array.from({ length: 9_000 }, (_, i) => i)
    const verdict = catalog({ type: "object", properties: { xs: { anyOf: [unique, { maxItems: 2 }] } } }).check(call(JSON.stringify({ xs: [...numbers, 0] })))
    expect(verdict.ok).toBe(false)
    expect(!verdict.ok && verdict.error).toMatch(/xs: holds duplicate items where uniqueItems applies only under anyOf/)
    // Unique, the same array is checked in full.
    expect(catalog({ type: "object", properties: { xs: { anyOf: [unique, { maxItems: 2 }] } } }).check(call(JSON.stringify({ xs: numbers }))).ok).toBe(true)
  })
})

describe("formats", () => {
  const original = libraryFormats.url!
  it("url on RE2 accepts exactly what the library's regex accepts", () => {
    const random = seeded(7)
    const pick = <A>(values: ReadonlyArray<A>): A => values[Math.floor(random() * values.length)]!
    const handpicked = [
      "http://example.com", "https://EXAMPLE.com/a/b?c=d#e", "ftp://files.example.org:21/x", "http://user:pass@host.example.com:8080/p",
      "http://10.0.0.1", "http://10.0.0.1.example.com", "http://100.0.0.1", "http://127.0.0.1/x", "http://128.0.0.1", "http://169.254.1.1", "http://169.253.1.1",
      "http://172.15.0.1", "http://172.16.0.1", "http://172.31.255.1", "http://172.32.0.1", "http://172.160.0.1", "http://192.168.1.1", "http://192.169.1.1",
      "http://1.2.3.4", "http://223.255.255.254", "http://224.0.0.1", "http://1.2.3.255", "http://1.2.3.0", "http://01.2.3.4", "http://1.02.3.4", "http://1.002.3.4",
      "http://a@10.0.0.1@8.8.8.8", "http://x@10.0.0.1/y@8.8.8.8", "http://10.0.0.1/x@8.8.8.8", "http://münchen.de", "http://xn--mnchen-3ya.de", "http://a-b.c-d.museum",
      "http://a--b.com", "http://-a.com", "http://a-.com", "http://localhost", "http://localhost:3000", "http://example.c", "http://example.123", "mailto:a@b.com",
      "http://exa mple.com", "http://example.com/a b", "http://example.com/\u00a0", "http://\u00a0@example.com", "http://example.com:1", "http://example.com:123456",
      "HTTP://EXAMPLE.COM", "http://ex\u212Aample.com", "http://example.com/\ud83d\ude00", "http://\ud83d\ude00.com", "http://example.\u00e9\u00e9", "http://a.b.c.d.e.fg"
    ]
    // URLs built from their parts (octets that the library's private ranges hinge on, labels, ports,
    // user info, paths), then some broken by a stray part put anywhere.
    const octets = ["0", "1", "9", "10", "16", "31", "32", "99", "100", "127", "168", "169", "172", "192", "199", "223", "224", "254", "255", "256", "01", "001"]
    const label = () => pick(["a", "example", "b-c", "a--b", "-a", "a-", "\u00e9t\u00e9", "x1", "1x", "com", "K\u212A"])
    const host = () => random() < 0.5
      ? Array.from({ length: 4 }, () => pick(octets)).join(".")
      : `${Array.from({ length: 1 + Math.floor(random() * 3) }, label).join(".")}.${pick(["com", "de", "c", "museum", "12", "\u00e9\u00e9", "x-y"])}`
    const parts = ["-", ".", "..", ":", ":80", "@", "/", "?", "#", " ", "\u00a0", "%20", "x", "10.", "192.168."]
    const generated = Array.from({ length: 6000 }, () => {
      let text = `${pick(["http://", "https://", "ftp://", "HTTP://", "mailto:", ""])}${random() < 0.2 ? `${pick(["u", "u:p", "10.0.0.1", "a@b"])}@` : ""}${host()}${random() < 0.2 ? pick([":80", ":8080", ":1", ":123456", ":"]) : ""}${random() < 0.3 ? pick(["/", "/a/b?c=d#e", "/x@8.8.8.8", "/a b", "/\ud83d\ude00"]) : ""}`
      if (random() < 0.3) {
        const at = Math.floor(random() * (text.length + 1))
        text = text.slice(0, at) + pick(parts) + text.slice(at)
      }
      return text
    })
    let accepted = 0
    for (const text of [...handpicked, ...generated]) {
      const expected = original(text)
      if (boundedFormats.url!(text) !== expected) throw new Error(`${JSON.stringify(text)}: library ${expected}, ours ${!expected}`)
      if (expected) accepted++
    }
    expect(accepted).toBeGreaterThan(100)
  })

  it("url on a 40,000-character host: not a URL, answered at once", () => {
    const verdict = catalog({ type: "object", properties: { u: { type: "string", format: "url" } } }).check(call(JSON.stringify({ u: `http://${"a".repeat(40_000)}!` })))
    expect(verdict).toEqual({ ok: false, error: "arguments do not match the schema of f: u: String does not match format \"url\"." })
  })

  it("formats with a longest value refuse longer strings, and agree with the library below it", () => {
    const cases: ReadonlyArray<[string, string]> = [["date", "2024-02-29"], ["ipv4", "192.168.100.200"], ["ipv6", "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"], ["uuid", "123e4567-e89b-12d3-a456-426614174000"], ["hostname", `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`], ["email", `${"a".repeat(64)}@${"b".repeat(63)}.com`]]
    for (const [name, longest] of cases) {
      expect(libraryFormats[name]!(longest)).toBe(true)
      expect(boundedFormats[name]!(longest)).toBe(true)
      expect(boundedFormats[name]!(`${longest}${"0".repeat(40_000)}`)).toBe(false)
    }
  })

  it("regex compiles on RE2 up to its length bound", () => {
    expect(boundedFormats.regex!("^[a-z]+$")).toBe(true)
    expect(boundedFormats.regex!("(?=a)b")).toBe(false)
    expect(boundedFormats.regex!("a".repeat(2_000))).toBe(false)
  })
})

describe("arguments and repair are bounded", () => {
  const weather = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }

  it("arguments over maxArgumentBytes are invalid, the setting named, and never parsed", () => {
    const verdict = catalog(weather, { maxArgumentBytes: 1024 }).check(call(JSON.stringify({ city: "é".repeat(600) })))
    // {"city":"…"}: 9 + 600 two-byte characters + 2.
    expect(verdict).toEqual({ ok: false, error: "arguments are 1211 bytes, more than the 1024 that are validated (chat.validation.maxArgumentBytes)" })
  })

  it("JSON content likewise: over the size bound invalid, repaired only within the repair bound", () => {
    const small = { ...defaultValidationLimits, maxArgumentBytes: 64, maxRepairBytes: 4 }
    const judge = contentJudge({ type: "json_object" }, small)!
    expect(judge.judge(`{"a": "${"x".repeat(80)}"}`).verdict).toEqual({ ok: false, error: "content is 89 bytes, more than the 64 that are validated (chat.validation.maxArgumentBytes)" })
    expect(judge.judge("{\"a\": 1,", true).verdict).toMatchObject({ ok: false, error: expect.stringMatching(/^content is not valid JSON \(.*\); not repaired: 8 bytes, more than the 4 that are repaired \(chat\.validation\.maxRepairBytes\)$/) })
    expect(contentJudge({ type: "json_object" })!.judge("{\"a\": 1,", true)).toEqual({ verdict: { ok: true, value: { a: 1 } }, repaired: "{\"a\": 1}" })
    expect(contentJudge({ type: "json_object" })!.judge("[1]").verdict).toEqual({ ok: false, error: "content is JSON but not an object, as json_object requires" })
  })

  it("repair: broken arguments within maxRepairBytes are fixed; over it, left with the reason", () => {
    expect(catalog(weather).repair(call("{city: 'Oslo'")).verdict).toEqual({ ok: true, value: { city: "Oslo" } })
    const crafted = `{"city": "x", "n": [${"1 ".repeat(400_000)}]`
    const raised = catalog(weather, { maxArgumentBytes: 4 * 1024 * 1024 })
    const { verdict } = raised.repair(call(crafted))
    expect(verdict.ok).toBe(false)
    expect(!verdict.ok && verdict.error).toMatch(/^arguments is not valid JSON \(.*\); not repaired: \d+ bytes, more than the 8192 that are repaired \(chat\.validation\.maxRepairBytes\)$/)
    expect(!verdict.ok && verdict.error).toContain(`not repaired: ${crafted.length} bytes`)
  })

  it("a value nested deeper than the stack is invalid, said so", () => {
    const verdict = catalog({ type: "array", items: { $ref: "#" } }, { maxArgumentBytes: 4 * 1024 * 1024 }).check(call(`${"[".repeat(200_000)}${"]".repeat(200_000)}`))
    expect(verdict).toEqual({ ok: false, error: "arguments do not match the schema of f: the value is nested too deeply to check" })
  })
})

describe("request schemas are bounded in size and depth", () => {
  const deep = (levels: number): Record<string, unknown> => {
    let schema: Record<string, unknown> = { type: "string" }
    for (let i = 0; i < levels; i++) schema = { type: "object", properties: { a: schema } }
    return schema
  }
  const wide = (properties: number) => ({ type: "object", properties: Object.fromEntries(Array.from({ length: properties }, (_, i) => [`p${i}`, { type: "string", description: "x".repeat(40) }])) })

  it("measures size and depth as JSON, without recursion", () => {
    expect(jsonExtent({ a: [1, "é"], b: null }, 1000, 10)).toEqual({ within: true, bytes: JSON.stringify({ a: [1, "é"], b: null }).length + 1, depth: 2 })
    let nested: unknown = 0
    for (let i = 0; i < 100_000; i++) nested = [nested]
    expect(jsonExtent(nested, 1e9, 1e9)).toMatchObject({ within: true, depth: 100_000 })
    expect(jsonExtent(nested, 1e9, 64)).toEqual({ within: false, bound: "depth", found: 65 })
  })

  it("over the configured bounds: the problem names the field and the setting", () => {
    expect(requestSchemaProblem({ tools: [{ function: { parameters: wide(10) } }, { function: { parameters: wide(3000) } }] }, defaultValidationLimits)).toEqual({
      param: "tools[1].function.parameters",
      message: "tools[1].function.parameters: must be at most 131072 bytes as JSON (chat.validation.maxSchemaBytes), got more"
    })
    expect(requestSchemaProblem({ response_format: { type: "json_schema", json_schema: { name: "x", schema: deep(40) } } }, defaultValidationLimits)).toEqual({
      param: "response_format.json_schema.schema",
      message: "response_format.json_schema.schema: must be nested at most 64 levels deep as JSON (chat.validation.maxSchemaDepth), got 65 or more"
    })
    expect(requestSchemaProblem({ tools: [{ function: { parameters: deep(20) } }, { function: { parameters: wide(100) } }] }, defaultValidationLimits)).toBeUndefined()
  })
})

describe("regexes in request schemas are bounded in size before anything is compiled", () => {
  const patterned = (patterns: ReadonlyArray<string>) => ({ type: "object", properties: Object.fromEntries(patterns.map((pattern, i) => [`p${i}`, { type: "string", pattern }])) })

  it("estimates RE2's program size from the text: counted repetitions spelled out", () => {
    expect(patternSize("^[a-z0-9_-]{1,64}$")).toBeGreaterThanOrEqual(128)
    expect(patternSize("^[a-z0-9_-]{1,64}$")).toBeLessThan(200)
    expect(patternSize("[^a]{1,999}".repeat(5))).toBeGreaterThan(9_000)
    expect(patternSize("^\\d{4}-\\d{2}-\\d{2}$")).toBeLessThan(30)
  })

  it("a pattern that expands past 5000 steps is a problem at its place", () => {
    expect(requestSchemaProblem({ tools: [{ function: { parameters: patterned(["^[a-z]+$", "[^a]{1,999}".repeat(6)]) } }] })).toEqual({
      param: "tools[0].function.parameters",
      message: expect.stringMatching(/^tools\[0\]\.function\.parameters: must be a valid JSON Schema: \/properties\/p1\/pattern must expand to at most 5000 RE2 steps \(counted repetitions such as \{1,999\} are spelled out, each copy a step\); this one to about \d+, got /)
    })
  })

  it("a request's patterns past 20000 steps in all, across its tools, are refused before any of them is compiled", () => {
    // A hundred distinct patterns of about 2000 steps: compiling them took seconds.
    const distinct = Array.from({ length: 100 }, (_, i) => `[^${String.fromCharCode(0x4e00 + i)}]{1,999}`)
    const problem = requestSchemaProblem({ tools: [{ function: { parameters: patterned(distinct.slice(0, 5)) } }, { function: { parameters: patterned(distinct.slice(5)) } }] })
    expect(problem?.param).toBe("tools[1].function.parameters")
    expect(problem?.message).toMatch(/\/properties\/p\d+\/pattern takes the patterns of the request past 20000 RE2 steps in all/)
    // A property-name pattern counts too, and so does a pattern only a $ref reaches.
    expect(requestSchemaProblem({ tools: [{ function: { parameters: { patternProperties: { ["[^a]{1,999}".repeat(6)]: {} } } } }] })?.message).toMatch(/\/patternProperties\/.* \(the property name pattern\) must expand to at most 5000/)
    expect(requestSchemaProblem({ tools: [{ function: { parameters: { $ref: "#/x-hidden", "x-hidden": { pattern: "[^a]{1,999}".repeat(6) } } } }] })?.message).toMatch(/\/x-hidden\/pattern must expand/)
  })

  it("format regex: a model's string that expands past the bound is not a regex here", () => {
    expect(boundedFormats.regex!("[^a]{1,999}".repeat(6))).toBe(false)
    expect(boundedFormats.regex!("[^a]{1,999}")).toBe(true)
  })
})

describe("chat.validation in the config file", () => {
  const decode = decoderFor(ConfigFile, "file", { unknownKeys: "error" })

  it("each bound is a setting laid over the defaults; policy alone, or bounds alone", () => {
    const file = Result.getOrThrow(decode({ chat: { validation: { maxArgumentBytes: 1_048_576, maxUniqueItems: 50 } } }))
    expect(validationPolicyOf(file.chat)).toEqual({ mode: "retry", retries: 2, limits: { ...defaultValidationLimits, maxArgumentBytes: 1_048_576, maxUniqueItems: 50 } })
    const policy = Result.getOrThrow(decode({ chat: { validation: { policy: "repair" } } }))
    expect(validationPolicyOf(policy.chat)).toEqual({ mode: "repair", retries: 2, limits: defaultValidationLimits })
  })

  const bad: ReadonlyArray<[unknown, string, RegExp]> = [
    [{ maxArgumentBytes: 0 }, "chat.validation.maxArgumentBytes", /integer from 1 to 4194304/],
    [{ maxRepairBytes: 2_000_000 }, "chat.validation.maxRepairBytes", /integer from 1 to 1048576/],
    [{ jobThresholdBytes: 0 }, "chat.validation.jobThresholdBytes", /integer from 1 to 16777216/],
    [{ jobDeadlineMs: 50 }, "chat.validation.jobDeadlineMs", /integer from 100 to 120000/],
    [{ maxSchemaBytes: 1.5 }, "chat.validation.maxSchemaBytes", /integer from 1 to 4194304/],
    [{ maxSchemaDepth: "64" }, "chat.validation.maxSchemaDepth", /integer from 1 to 512/],
    [{ maxUniqueItems: -1 }, "chat.validation.maxUniqueItems", /integer from 1 to 1000000/],
    [{ maxArgs: 1 }, "chat.validation.maxArgs", /./]
  ]
  for (const [validation, path, rule] of bad) {
    it(`${JSON.stringify(validation)} names ${path}`, () => {
      const result = decode({ chat: { validation } })
      if (!Result.isFailure(result)) throw new Error("expected a failure")
      expect(result.failure.path).toBe(path)
      expect(result.failure.message).toMatch(rule)
    })
  }
})
