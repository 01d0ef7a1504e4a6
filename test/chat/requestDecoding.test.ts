/**
 * The chat request is decoded by code Effect's schema JIT compiler generates (decoderFor's
 * `compiled`): a valid body never reaches the interpreter. Its answers must be the
 * interpreter's, on valid and invalid bodies alike, so random bodies (a valid one with a few
 * fields replaced by values good and bad) go through both and are compared.
 */
import { describe, expect, it } from "vitest"
import { ChatCompletionRequest, chatDefaults, toChatRequest } from "../../core/chat/ChatRequest.ts"
import { decoderFor } from "../../core/schema/Decode.ts"
import { seeded } from "../index/support.ts"
import { expectSameAnswers, randomBody } from "../support/decoderEquivalence.ts"

const compiled = decoderFor(ChatCompletionRequest, "request body", { compiled: true })
const interpreted = decoderFor(ChatCompletionRequest, "request body")

const random = seeded(29)
const pick = <A>(values: ReadonlyArray<A>): A => values[Math.floor(random() * values.length)]!

const scalars: ReadonlyArray<unknown> = [null, true, false, 0, -3, 0.5, 1, 2, 7, 16, 17, 512, 9000, 1.5, Number.MAX_SAFE_INTEGER, "", "x", "auto", "none", "required", [], {}]
const message = (): unknown =>
  pick([
    { role: "user", content: "hello" },
    { content: "no role" },
    { role: "developer", content: "be brief" },
    { role: "system", content: [{ type: "text", text: "parts" }] },
    { role: "user", content: [{ type: "image_url", image_url: { url: "https://i.example/a.png" } }] },
    { role: "user", content: [{ type: "video", url: "x" }] },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", function: { name: "f", arguments: "{}" } }] },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "other", function: { name: "f", arguments: "{}" } }] },
    { role: "assistant", content: null },
    { role: "tool", tool_call_id: "c1", content: "42" },
    { role: "tool", content: "42" },
    { role: "wizard", content: "x" },
    { role: "user", content: 5 },
    "just text",
    null
  ])
const tool = (): unknown =>
  pick([
    { type: "function", function: { name: "lookup", parameters: { type: "object" } } },
    { function: { name: "search_docs" } },
    { type: "web_search" },
    { type: "web_fetch" },
    { type: "function" },
    { type: "function", function: { name: "bad name!" } },
    { type: "retrieval" },
    { function: { name: "web_search" } },
    "lookup"
  ])
const stop = (): unknown =>
  pick([null, "END", "", ["a", "b"], [], ["x", ""], Array.from({ length: 17 }, (_, i) => `s${i}`), Array.from({ length: 16 }, (_, i) => `s${i}`), 3, [1]])

const fields: Record<string, () => unknown> = {
  model: () => pick(["m", "", 3, null]),
  messages: () => pick([[message()], [message(), message(), message()], [], "hi", null]),
  frequency_penalty: () => pick(scalars),
  presence_penalty: () => pick(scalars),
  max_tokens: () => pick(scalars),
  max_completion_tokens: () => pick(scalars),
  n: () => pick(scalars),
  temperature: () => pick(scalars),
  top_p: () => pick(scalars),
  top_k: () => pick(scalars),
  seed: () => pick(scalars),
  stream: () => pick([true, false, "yes", null]),
  stream_options: () => pick([{ include_usage: true }, {}, null, { include_usage: "no" }]),
  stop,
  tools: () => pick([[tool()], [tool(), tool(), tool()], [], {}, null]),
  tool_choice: () => pick(["auto", "none", "required", { type: "function", function: { name: "lookup" } }, { type: "function", function: { name: "missing" } }, 7]),
  parallel_tool_calls: () => pick([true, "no"]),
  user: () => pick(["u1", 5]),
  response_format: () => pick([{ type: "text" }, { type: "json_object" }, { type: "json_schema", json_schema: { name: "s", schema: { type: "object" } } }, { type: "yaml" }, "json"]),
  web_search_options: () => pick([{}, { search_context_size: "high" }, { search_context_size: "huge" }, { user_location: { type: "approximate", approximate: { city: "Oslo" } } }, []]),
  extra_field: () => pick([1, "kept out"])
}

const body = () => randomBody(random, { model: "m", messages: [{ role: "user", content: "hello" }] }, fields)

describe("the compiled chat request decoder", () => {
  it("answers as the interpreter does on 3,000 random bodies, valid and invalid", () => {
    expectSameAnswers(compiled, interpreted, body, 3000)
  })

  it("leaves the spec defaults to toChatRequest, which applies them and makes stop an array", () => {
    const decoded = compiled({ model: "m", messages: [{ content: "hi" }], stop: "END", tools: [{ function: { name: "f" } }] })
    if (decoded._tag !== "Success") throw new Error(decoded.failure.message)
    const request = toChatRequest(decoded.success, "m")
    expect(request).toMatchObject({
      frequency_penalty: chatDefaults.frequency_penalty,
      n: chatDefaults.n,
      temperature: chatDefaults.temperature,
      top_p: chatDefaults.top_p,
      top_k: chatDefaults.top_k,
      stream: false,
      max_tokens: chatDefaults.max_tokens,
      stop: ["END"],
      tools: [{ type: "function", function: { name: "f" } }]
    })
    expect(request.messages[0]!.role).toBe("user")
  })
})
