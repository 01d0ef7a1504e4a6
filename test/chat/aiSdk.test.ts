/**
 * The Vercel AI SDK with @ai-sdk/openai-compatible, unchanged, against our
 * chat endpoint: generateText, streamText and a tool-call round trip in which
 * the SDK runs the tool and sends its result back.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { generateText, isStepCount, streamText, tool } from "ai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import { contentText } from "../../core/chat/ChatRequest.ts"
import { type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"

let server: RunningServer
let model: ReturnType<ReturnType<typeof createOpenAICompatible>["chatModel"]>

beforeAll(async () => {
  server = await startInProcess({
    chat: ScriptedChat.layer({
      models: ["agent-model"],
      replies: (request) => {
        const last = request.messages[request.messages.length - 1]!
        if (last.role === "tool") return { content: `It is ${JSON.parse(contentText(last.content)).temperature} degrees in Paris.` }
        if (request.tools !== undefined) return { toolCalls: [{ id: "call_w", name: "weather", arguments: { location: "Paris" } }] }
        return { content: `Echo: ${contentText(last.content)}`, reasoning: "echoing" }
      }
    })
  })
  model = createOpenAICompatible({ name: "periscope", baseURL: `${server.url}/v1`, apiKey: TEST_KEY, includeUsage: true }).chatModel("agent-model")
})
afterAll(() => server.close())

describe("Vercel AI SDK", () => {
  it("generateText", async () => {
    const result = await generateText({ model, prompt: "hello sdk", maxRetries: 0 })
    expect(result.text).toBe("Echo: hello sdk")
    expect(result.finishReason).toBe("stop")
    expect(result.usage.totalTokens).toBeGreaterThan(0)
  })

  it("streamText", async () => {
    const result = streamText({ model, prompt: "stream it", maxRetries: 0 })
    let text = ""
    for await (const delta of result.textStream) text += delta
    expect(text).toBe("Echo: stream it")
    expect((await result.usage).totalTokens).toBeGreaterThan(0)
    expect(await result.finishReason).toBe("stop")
  })

  it("round-trips a tool call: the SDK runs the tool and the model answers from its result", async () => {
    const calls: Array<string> = []
    const result = await generateText({
      model,
      maxRetries: 0,
      prompt: "What is the weather in Paris?",
      tools: {
        weather: tool({
          description: "Weather of a location",
          inputSchema: z.object({ location: z.string() }),
          execute: async ({ location }) => {
            calls.push(location)
            return { location, temperature: 21 }
          }
        })
      },
      stopWhen: isStepCount(3)
    })
    expect(calls).toEqual(["Paris"])
    expect(result.steps).toHaveLength(2)
    expect(result.steps[0]!.toolCalls[0]!.toolName).toBe("weather")
    expect(result.text).toBe("It is 21 degrees in Paris.")
  })
})
