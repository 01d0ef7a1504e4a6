/**
 * The baseline of test/bench/http.ts: a bare node:http server that parses the
 * same JSON bodies, does the same backend work (fixture search over the same
 * documents; the scripted reply with o200k_base usage) and writes the same
 * JSON. No validation beyond JSON.parse, no auth, no framework.
 * Usage: node bareHttpServer.ts <port>
 */
import { createServer } from "node:http"
import { FixtureSearch } from "../../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../../core/backends/SampleDocuments.ts"
import { unconfiguredChat } from "../../../core/backends/ScriptedChat.ts"
import { countPromptTokens } from "../../../core/chat/TokenCount.ts"
import { onJsonBody } from "./bareJsonBody.ts"

const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base")
const count = (text: string) => (text === "" ? 0 : countTokens(text))
const fixture = FixtureSearch.make(sampleDocuments)
const reply = (unconfiguredChat.replies as ReadonlyArray<{ content: string }>)[0]!.content

const server = createServer((req, res) => {
  onJsonBody(req, (body) => {
    if (body === undefined) {
      res.writeHead(400).end()
      return
    }
    let out: unknown
    try {
      if (req.url === "/api/search/webSearch") {
        const data = fixture.web({ keywords: String(body.keywords).trim(), num: body.num ?? 10 })
        out = { success: true, code: "200", message: "success", exception: null, data, extra: null }
      } else if (req.url === "/v1/chat/completions") {
        const prompt = countPromptTokens(count, body.messages)
        const completion = count(reply)
        out = {
          id: "chatcmpl-bare",
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model ?? "periscope-scripted",
          choices: [{ index: 0, message: { role: "assistant", content: reply, reasoning_content: "" }, finish_reason: "stop", logprobs: null }],
          usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
        }
      } else {
        res.writeHead(404).end()
        return
      }
    } catch {
      res.writeHead(400).end()
      return
    }
    const text = JSON.stringify(out)
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text)
  })
})
server.listen(Number(process.argv[2]), "127.0.0.1", () => process.stdout.write("listening\n"))
