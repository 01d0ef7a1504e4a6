/**
 * TokenCount and FinishReason as units: the encoding loads once per service
 * and is synchronous after that (no async hop per request), and the one rule
 * that decides finish_reason.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { finishReasonOf, fromUpstream } from "../../core/chat/FinishReason.ts"
import { TokenCount } from "../../core/chat/TokenCount.ts"

describe("TokenCount", () => {
  it("loads the encoding on first use, then hands back the same one synchronously", async () => {
    const tokens = Effect.runSync(TokenCount.make)
    const first = await Effect.runPromise(tokens.encoding)
    // runSync throws on anything asynchronous: once loaded, there is no async hop.
    expect(Effect.runSync(tokens.encoding)).toBe(first)
    expect(first.count("hello world")).toBe(2)
    expect(first.count("")).toBe(0)
    expect(first.truncate("one two three four", 2)).toBe("one two")
  })

  it("loads once when many ask at the same time", async () => {
    const tokens = Effect.runSync(TokenCount.make)
    const all = await Effect.runPromise(Effect.all(Array.from({ length: 5 }, () => tokens.encoding), { concurrency: "unbounded" }))
    expect(new Set(all).size).toBe(1)
  })

  it("is provided by its layer", async () => {
    const usage = await Effect.runPromise(
      Effect.flatMap(Effect.service(TokenCount), (t) =>
        t.countUsage({ messages: [{ role: "user", content: "hi" }] } as never, ["hello world"], 2)).pipe(Effect.provide(TokenCount.layer))
    )
    // The prompt counts once per request made: (3 priming + 3 framing + 1) x 2.
    expect(usage).toEqual({ prompt_tokens: 14, completion_tokens: 2, total_tokens: 16 })
  })
})

describe("finish reasons", () => {
  it("read upstream names into the spec's set", () => {
    expect(fromUpstream(undefined)).toBeNull()
    expect(fromUpstream(null)).toBeNull()
    expect(fromUpstream("end_turn")).toBe("stop")
    expect(fromUpstream("max_tokens")).toBe("length")
    expect(fromUpstream("tool_use")).toBe("tool_calls")
    expect(fromUpstream("eos_token")).toBe("eos")
    expect(fromUpstream("abort")).toBe("error")
    expect(fromUpstream("something new")).toBe("stop")
    expect(fromUpstream(3)).toBe("stop")
  })

  it("are decided by one rule: tool calls, then a stop sequence, then what the backend said", () => {
    expect(finishReasonOf({ reported: undefined, toolCalls: 0 })).toBe("stop")
    expect(finishReasonOf({ reported: null, toolCalls: 1 })).toBe("tool_calls")
    expect(finishReasonOf({ reported: "stop", toolCalls: 2 })).toBe("tool_calls")
    expect(finishReasonOf({ reported: "length", toolCalls: 1 })).toBe("length")
    expect(finishReasonOf({ reported: "length", toolCalls: 0, stopSequence: true })).toBe("stop")
    expect(finishReasonOf({ reported: null, toolCalls: 1, stopSequence: true })).toBe("tool_calls")
    expect(finishReasonOf({ reported: "eos", toolCalls: 0 })).toBe("eos")
    expect(finishReasonOf({ reported: "tool_calls", toolCalls: 0 })).toBe("tool_calls")
  })
})
