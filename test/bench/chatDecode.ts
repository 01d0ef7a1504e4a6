/**
 * What validating a chat request costs, per request, side by side with Ajv (a compiled JSON
 * Schema validator) checking the same body against the request schema of our own OpenAPI
 * document. Ajv only answers valid or not; Periscope's decoder (compiled by Effect's schema JIT,
 * as the server decodes request bodies) also gives the typed request and names the field and
 * the rule on a bad input, so this is the distance to a compiled check, not a like-for-like race. Two bodies: the one test/bench/http.ts sends (2 messages), and an
 * agent's turn (31 messages with tool calls and results, 8 tools).
 *
 *   node test/bench/chatDecode.ts [--rounds 15]
 *
 * Prints microseconds per body (the fastest and the median round), JSON.parse alone beside them.
 */
import { cpus } from "node:os"
import { parseArgs } from "node:util"
import { Ajv2020 } from "ajv/dist/2020.js"
import { OpenApi } from "effect/http-api"
import { PeriscopeApi } from "../../core/api/Api.ts"
import { ChatCompletionRequest } from "../../core/chat/ChatRequest.ts"
import { decodeJsonText, decoderFor } from "../../core/schema/Decode.ts"
import { benchRequests } from "./support/benchRequests.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values } = parseArgs({ options: { rounds: { type: "string", default: "15" } } })
const rounds = wholeNumberOption("--rounds", values.rounds)

const tools = Array.from({ length: 8 }, (_, i) => ({
  type: "function",
  function: {
    name: `tool_${i}`,
    description: "Looks something up.",
    parameters: { type: "object", properties: { query: { type: "string" }, limit: { type: "integer", minimum: 1 } }, required: ["query"] }
  }
}))
const agentMessages: Array<unknown> = [{ role: "system", content: "You are a careful research agent." }]
for (let i = 0; i < 10; i++) {
  agentMessages.push({ role: "user", content: `Question ${i}: what changed in the latest release?` })
  agentMessages.push({ role: "assistant", content: null, tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "tool_1", arguments: "{\"query\":\"latest release\"}" } }] })
  agentMessages.push({ role: "tool", tool_call_id: `call_${i}`, content: "A line of tool output. ".repeat(20) })
}
const bodies = [
  { name: "2 messages", text: benchRequests.chat.body },
  { name: "agent turn", text: JSON.stringify({ model: "m", messages: agentMessages, tools, tool_choice: "auto", temperature: 0.2, stream: true }) }
]

const decode = decoderFor(ChatCompletionRequest, "request body", { compiled: true })
const ajv = new Ajv2020({ strict: false })
ajv.addSchema({ ...OpenApi.fromApi(PeriscopeApi), $id: "openapi.json" })
const ajvValidate = ajv.getSchema("openapi.json#/components/schemas/ChatCompletionRequest")!

// Each peer gets the body's text: Periscope's parses and decodes it as the server does (core/schema/Decode.ts).
const peers: Array<{ name: string; check: (text: string) => boolean }> = [
  { name: "Periscope (Schema decode)", check: (text) => decodeJsonText(text, "request body", decode)._tag === "Success" },
  { name: "Ajv (compiled JSON Schema)", check: (text) => ajvValidate(JSON.parse(text)) as boolean },
  { name: "JSON.parse alone", check: (text) => JSON.parse(text) !== undefined }
]

/** Microseconds per body in each round: parse plus check (parse alone for the last peer). */
const time = (text: string, check: (text: string) => boolean, iterations: number): Array<number> => {
  const perRound: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    const start = performance.now()
    for (let i = 0; i < iterations; i++) if (!check(text)) throw new Error("a valid body was refused")
    perRound.push((performance.now() - start) / iterations * 1000)
  }
  return perRound.sort((a, b) => a - b)
}

console.log(`Chat request decoding: ${rounds} rounds per body and peer (fastest / median round, µs per body, JSON.parse included); ${process.version}, ${cpus().length} cores\n`)
for (const body of bodies) {
  const iterations = Math.max(200, Math.round(2_000_000 / body.text.length))
  for (const peer of peers) time(body.text, peer.check, iterations) // warm-up
  console.log(`${body.name} (${body.text.length} bytes):`)
  for (const peer of peers) {
    const t = time(body.text, peer.check, iterations)
    console.log(`  ${peer.name.padEnd(28)} ${t[0]!.toFixed(1).padStart(7)} / ${t[t.length >> 1]!.toFixed(1).padStart(7)} µs`)
  }
}
