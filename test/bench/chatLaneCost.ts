/**
 * What a chat request costs Periscope's process, whole and streamed, without HTTP in front: the
 * express lane's answer (key, limits, decoding, the gateway, the SSE stages) over the real chat
 * stack and upstream client, against the mock upstream in a process of its own, one request at a
 * time. The same requests through the chat gateway alone (ChatGateway.complete and .stream,
 * drained) split the gateway's share from the lane's and the SSE stages'.
 *
 *   node test/bench/chatLaneCost.ts [--requests 1500] [--rounds 3] [--words 1]
 *
 * Prints, per path, CPU time of this process per request (median of the rounds, the upstream's
 * process not included) and the fibers started per request. The fiber count includes this
 * script's own: one per whole request, three per streamed one on the lane (answer, drain, join),
 * one or two through the gateway alone.
 */
import { cpus } from "node:os"
import { parseArgs } from "node:util"
import { Effect, Fiber, Stream } from "effect"
import { alignedTable } from "./support/alignedTable.ts"
import { benchChatBody, makeBenchChatStack } from "./support/benchChatStack.ts"
import { median } from "./support/stats.ts"
import { startUpstreamProcess } from "./support/upstreamProcess.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "1500" },
    rounds: { type: "string", default: "3" },
    words: { type: "string", default: "1" }
  }
})
const requests = wholeNumberOption("--requests", values.requests)
const rounds = wholeNumberOption("--rounds", values.rounds)
const words = wholeNumberOption("--words", values.words)

const upstreamUrl = (await startUpstreamProcess(words)).url

// The application's own composition, with a key whose limit the run cannot reach.
const stack = await makeBenchChatStack(upstreamUrl)

const throughLane = async (stream: boolean) => {
  const answer = await stack.answerInLane(benchChatBody(stream))
  if (answer._tag === "Json") {
    if (answer.status !== 200) throw new Error(`the lane answered ${answer.status}: ${answer.body}`)
    return
  }
  let received = ""
  const decoder = new TextDecoder()
  await Effect.runPromise(Fiber.join(stack.lane.fork(Stream.runForEach(answer.events, (bytes) => Effect.sync(() => { received += decoder.decode(bytes, { stream: true }) })))))
  if (!received.endsWith("data: [DONE]\n\n") || !received.includes("word0")) throw new Error(`a stream ended early: ${received.slice(0, 200)}`)
}

const throughGateway = async (stream: boolean) => {
  const request = stack.gatewayRequest(benchChatBody(stream))
  if (stream) await Effect.runPromise(Stream.runDrain(stack.chat.stream(request)))
  else await Effect.runPromise(stack.chat.complete(request))
}

/** Effect numbers fibers from one counter: a new fiber's id is the count so far. */
const fibersSoFar = () => Effect.runFork(Effect.void).id

const paths = [
  { name: "lane, whole", run: () => throughLane(false) },
  { name: "lane, streamed", run: () => throughLane(true) },
  { name: "gateway alone, whole", run: () => throughGateway(false) },
  { name: "gateway alone, streamed", run: () => throughGateway(true) }
]
const cpu = new Map<string, Array<number>>(paths.map((p) => [p.name, []]))
const fibers = new Map<string, number>()
for (let round = 0; round < rounds; round++) {
  for (const path of paths) {
    for (let i = 0; i < 200; i++) await path.run()
    const fibersBefore = fibersSoFar()
    const before = process.cpuUsage()
    for (let i = 0; i < requests; i++) await path.run()
    const used = process.cpuUsage(before)
    cpu.get(path.name)!.push((used.user + used.system) / requests)
    fibers.set(path.name, (fibersSoFar() - fibersBefore - 1) / requests)
  }
}
await stack.close()

console.log(`Chat in process, one request at a time: ${requests} requests x ${rounds} rounds per path, ${words}-word answers; ${process.version}, ${cpus().length} cores\n`)
const rows = paths.map((p) => [p.name, median(cpu.get(p.name)!).toFixed(0), cpu.get(p.name)!.map((x) => x.toFixed(0)).join(", "), fibers.get(p.name)!.toFixed(1)])
const header = ["path", "CPU µs/request (median)", "rounds", "fibers/request"]
console.log(alignedTable(header, rows))
const at = (name: string) => median(cpu.get(name)!)
console.log(`\nstreamed vs whole: lane ${(at("lane, streamed") / at("lane, whole")).toFixed(2)}x, gateway alone ${(at("gateway alone, streamed") / at("gateway alone, whole")).toFixed(2)}x; the lane's and SSE stages' share of a stream: ${(at("lane, streamed") - at("gateway alone, streamed")).toFixed(0)} µs`)
process.exit(0)
