/**
 * Large model output judged on real job threads (adapters/node/jobThreads.ts) by the gateway:
 * arguments over chat.validation.jobThresholdBytes are checked and repaired there, the thread
 * that answers keeps running meanwhile (its timers fire), a check past
 * chat.validation.jobDeadlineMs is ended at the deadline and the output judged invalid under
 * the policy (the thread replaced, the next check answered), and a full job queue is the
 * server's 503, not the model's fault. Small output never leaves the thread.
 */
import { Effect, Fiber, Layer, Schedule } from "effect"
import { describe, expect, it } from "vitest"
import { nodeJobWorkersLayer } from "../../adapters/node/jobThreads.ts"
import { ScriptedChat, type ScriptedReply } from "../../core/backends/ScriptedChat.ts"
import { ChatGateway, type GatewayResult, type ValidationPolicy } from "../../core/chat/ChatGateway.ts"
import { type ChatRequest, toChatRequest } from "../../core/chat/ChatRequest.ts"
import { defaultValidationLimits, type ValidationLimits } from "../../core/chat/ValidationLimits.ts"
import { type JobLimits, JobRunner } from "../../core/jobs/JobRunner.ts"

const parameters = { type: "object", properties: { xs: { type: "array", items: { type: "integer" }, uniqueItems: true } }, required: ["xs"] }
const requestOf = (name = "f"): ChatRequest =>
  toChatRequest({ model: "m", messages: [{ role: "user", content: "go" }], tools: [{ type: "function", function: { name, parameters } }] }, "m")

/** Replies in turn, or by the name of the request's tool (each call to that tool with these arguments). */
type Replies = ReadonlyArray<ScriptedReply> | Readonly<Record<string, string | Record<string, unknown>>>

const gatewayLayer = (replies: Replies, policy: ValidationPolicy, jobs: JobLimits) =>
  ChatGateway.layer(policy).pipe(
    Layer.provide(Layer.merge(
      ScriptedChat.layer({
        models: ["m"],
        replies: Array.isArray(replies) ? replies : (request) => {
          const name = request.tools![0]!.function.name
          return { toolCalls: [{ name, arguments: (replies as Record<string, string | Record<string, unknown>>)[name]! }] }
        }
      }),
      JobRunner.layer(jobs).pipe(Layer.provide(nodeJobWorkersLayer))
    ))
  )

/** Runs `body` with the gateway, counting the ticks of a 5 ms timer on this thread meanwhile. */
const withGateway = async <A>(
  replies: Replies,
  policy: ValidationPolicy,
  jobs: JobLimits,
  body: (gateway: ChatGateway["Service"]) => Effect.Effect<A, unknown>
): Promise<{ readonly result: A; readonly ticks: number }> => {
  let ticks = 0
  const timer = setInterval(() => ticks++, 5)
  try {
    const program = Effect.gen(function*() {
      return yield* body(yield* ChatGateway)
    })
    const result = await Effect.runPromise(Effect.provide(program, gatewayLayer(replies, policy, jobs)))
    return { result, ticks }
  } finally {
    clearInterval(timer)
  }
}

const limits = (overrides: Partial<ValidationLimits>): ValidationLimits => ({ ...defaultValidationLimits, maxArgumentBytes: 4 * 1024 * 1024, ...overrides })
const threads: JobLimits = { workers: 1, memoryMb: 256, queue: 4, deadlineMs: 30_000 }
const numbers = Array.from({ length: 50_000 }, (_, i) => i)
const argumentsOf = (result: GatewayResult) => result.choices[0]!.message.tool_calls![0]!.function.arguments

describe("large output judged on job threads", () => {
  it("arguments over the threshold are checked on a job thread: the verdict comes back, valid or not", async () => {
    const valid = JSON.stringify({ xs: numbers })
    const { result } = await withGateway([{ toolCalls: [{ name: "f", arguments: valid }] }], { mode: "retry", retries: 0, limits: limits({ maxUniqueItems: 100_000 }) }, threads, (gateway) => gateway.complete(requestOf()))
    expect(argumentsOf(result)).toBe(valid)

    const duplicate = JSON.stringify({ xs: [...numbers, 7] })
    const { result: failure } = await withGateway([{ toolCalls: [{ name: "f", arguments: duplicate }] }], { mode: "retry", retries: 0, limits: limits({ maxUniqueItems: 100_000 }) }, threads, (gateway) => Effect.flip(gateway.complete(requestOf())))
    expect(failure).toMatchObject({ reason: "upstream", code: "tool_call_invalid" })
    expect(failure.message).toContain("xs: Duplicate items at indexes 7 and 50000.")
  })

  it("repair runs on the job thread too: broken arguments over the threshold come back repaired", async () => {
    const broken = `{"xs": [${numbers.join(", ")}]`
    const { result } = await withGateway([{ toolCalls: [{ name: "f", arguments: broken }] }], { mode: "repair", retries: 0, limits: limits({ maxRepairBytes: 1024 * 1024, maxUniqueItems: 100_000 }) }, threads, (gateway) => gateway.complete(requestOf()))
    expect(JSON.parse(argumentsOf(result)).xs).toHaveLength(50_000)
  })

  it("a check past jobDeadlineMs is ended there: the output is invalid, this thread ran meanwhile, and the replaced thread takes the next check", async () => {
    // Missing commas after whitespace: jsonrepair copies everything written so far for each one (minutes for this).
    const crafted = `{"xs": [${"1 ".repeat(300_000)}]`
    // Room for the replacement thread to start (and load the validator) within the deadline on a busy machine.
    const policy: ValidationPolicy = { mode: "repair", retries: 0, limits: limits({ maxRepairBytes: 1024 * 1024, jobDeadlineMs: 3_000, maxUniqueItems: 100_000 }) }
    const { result, ticks } = await withGateway({ f: crafted, g: JSON.stringify({ xs: numbers }) }, policy, threads, (gateway) =>
      Effect.all([Effect.flip(gateway.complete(requestOf("f"))), gateway.complete(requestOf("g"))]))
    const [failure, next] = result
    expect(failure).toMatchObject({ reason: "upstream", code: "tool_call_invalid" })
    expect(failure.message).toContain("the arguments were not checked within 3000 ms (chat.validation.jobDeadlineMs)")
    expect(JSON.parse(argumentsOf(next)).xs).toHaveLength(50_000)
    expect(ticks).toBeGreaterThan(0)
  })

  it("a short text under large patterns goes to a job thread too (its regex work, not its size, decides)", async () => {
    const heavy = { type: "object", properties: { s: { type: "string", pattern: "^[^a]{0,999}[^b]{0,999}$" } } }
    const request = (name: string) =>
      toChatRequest({ model: "m", messages: [{ role: "user", content: "go" }], tools: [{ type: "function", function: { name, parameters: name === "heavy" ? heavy : parameters } }] }, "m")
    const crafted = `{"xs": [${"1 ".repeat(300_000)}]`
    const policy: ValidationPolicy = { mode: "repair", retries: 0, limits: limits({ maxRepairBytes: 1024 * 1024, jobDeadlineMs: 3_000 }) }
    const { result } = await withGateway({ f: crafted, heavy: JSON.stringify({ s: "x".repeat(1_500) }) }, policy, { ...threads, queue: 0 }, (gateway) =>
      Effect.gen(function*() {
        // The one thread taken by a check that runs to its deadline; then 1.5 KB under about 4000 steps a character.
        const slow = yield* Effect.forkChild(Effect.flip(gateway.complete(request("f"))))
        yield* Effect.sleep("300 millis")
        const busy = yield* Effect.flip(gateway.complete(request("heavy")))
        yield* Fiber.join(slow)
        // Once the ended thread's replacement is up, the same call is judged there.
        const afterwards = yield* gateway.complete(request("heavy")).pipe(
          Effect.retry({ while: (e) => e.reason === "unavailable", schedule: Schedule.spaced("100 millis"), times: 50 })
        )
        return { busy, afterwards }
      }))
    expect(result.busy.reason).toBe("unavailable")
    expect(JSON.parse(argumentsOf(result.afterwards)).s).toHaveLength(1_500)
  })

  it("a full job queue is the server's 503 with a time to retry, not an invalid output; small arguments never wait for a thread", async () => {
    const crafted = `{"xs": [${"1 ".repeat(300_000)}]`
    const policy: ValidationPolicy = { mode: "repair", retries: 0, limits: limits({ maxRepairBytes: 1024 * 1024, jobDeadlineMs: 2_000 }) }
    const { result } = await withGateway({ f: crafted, g: crafted, small: { xs: [1, 1] } }, policy, { ...threads, queue: 0 }, (gateway) =>
      Effect.all([requestOf("f"), requestOf("g"), requestOf("small")].map((request) => Effect.flip(gateway.complete(request))), { concurrency: "unbounded" }))
    const [first, second, small] = result
    expect([first.reason, second.reason].sort()).toEqual(["unavailable", "upstream"])
    const busy = [first, second].find((e) => e.reason === "unavailable")!
    expect(busy.message).toBe("the arguments could not be checked now: every job thread is busy and the queue is full")
    expect(busy.retryAfterSeconds).toBeGreaterThan(0)
    // Judged here while the one thread was taken and the queue full.
    expect(small).toMatchObject({ reason: "upstream", code: "tool_call_invalid" })
    expect(small.message).toContain("xs: Duplicate items at indexes 0 and 1.")
  })
})
