/**
 * What one tool-call check costs, before and after the bounds on validation
 * (core/chat/ValidationLimits.ts, UniqueItems.ts, SchemaFormats.ts): the
 * library's validator as the gateway called it before (JSON.parse, then
 * @cfworker/json-schema with RE2 patterns; jsonrepair on anything), and
 * ToolCatalog now, on normal calls and on the hostile ones.
 *
 *   node test/bench/toolValidation.ts [--rounds 15] [--cap-seconds 20]
 *
 * Normal calls: microseconds of CPU per check, the two paths' rounds
 * alternated (the fastest round, and the median). Hostile calls: the new
 * path's fastest round; the old path once (wall time), in a worker thread
 * that is stopped after --cap-seconds (printed as "> N s"). Last, what the hop to a job thread
 * costs (texts past chat.validation.jobThresholdBytes take it): the same
 * check here and through the job runner on one worker thread, one at a time.
 */
import { parseArgs } from "node:util"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"
import { Validator } from "@cfworker/json-schema"
import { Effect } from "effect"
import { jsonrepair } from "jsonrepair"
import { nodeJobWorkers } from "../../adapters/node/jobThreads.ts"
import { withLinearRegExp } from "../../core/chat/JsonSchemaCheck.ts"
import { Judge, makeContentCheck, ToolCatalog } from "../../core/chat/ToolValidation.ts"
import { judgeJob } from "../../core/chat/ValidationJobs.ts"
import { defaultValidationLimits, maximumValidationLimits, type ValidationLimits } from "../../core/chat/ValidationLimits.ts"
import { alignedTable } from "./support/alignedTable.ts"
import { median } from "./support/stats.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

type Schema = Record<string, unknown>

interface Case {
  readonly name: string
  readonly schema: Schema
  readonly args: string
  /** repair: the repair policy's path (jsonrepair, then the check); content: a json_schema response format. */
  readonly kind: "check" | "repair" | "content"
  readonly limits?: ValidationLimits
}

// --- the inputs ----------------------------------------------------------------------------

const weather: Schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }
const agent: Schema = {
  type: "object",
  properties: {
    query: { type: "string", pattern: "^[^\\n]{1,200}$" },
    filters: {
      type: "object",
      properties: {
        since: { type: "string", format: "date-time" },
        site: { type: "string", format: "hostname" },
        lang: { enum: ["en", "de", "fr", "ja"] }
      },
      additionalProperties: false
    },
    tags: { type: "array", items: { type: "string", minLength: 1 }, uniqueItems: true, maxItems: 20 },
    limit: { type: "integer", minimum: 1, maximum: 50 },
    source: { type: "string", format: "uri" },
    notify: { type: "string", format: "email" }
  },
  required: ["query"]
}
const agentArgs = JSON.stringify({
  query: "rust async runtimes compared for embedded targets",
  filters: { since: "2024-01-01T00:00:00Z", site: "docs.rs", lang: "en" },
  tags: ["rust", "async", "embedded", "tokio", "embassy", "no_std", "executor", "benchmarks", "latency", "memory"],
  limit: 10,
  source: "https://example.com/reports/2024/async?format=full",
  notify: "someone@example.com"
})
const records: Schema = {
  type: "object",
  properties: {
    ids: { type: "array", items: { type: "integer" }, uniqueItems: true },
    rows: { type: "array", items: { type: "object", properties: { id: { type: "integer" }, name: { type: "string" }, email: { type: "string", format: "email" } }, required: ["id", "name"] } }
  }
}
const recordsArgs = JSON.stringify({
  ids: Array.from({ length: 800 }, (_, i) => i * 7),
  rows: Array.from({ length: 800 }, (_, i) => ({ id: i, name: `Person number ${i} of the list`, email: `person${i}@example.org` }))
})
const answer: Schema = { type: "object", properties: { answer: { type: "string" }, confidence: { type: "number", minimum: 0, maximum: 1 }, sources: { type: "array", items: { type: "string", format: "uri" } } }, required: ["answer"] }
const answerContent = JSON.stringify({ answer: "The river is about 1,230 km long. ".repeat(20), confidence: 0.8, sources: ["https://example.com/a", "https://example.org/b"] })

const raised: ValidationLimits = { ...defaultValidationLimits, maxArgumentBytes: maximumValidationLimits.maxArgumentBytes, maxUniqueItems: 100_000 }
const numbers = JSON.stringify({ xs: Array.from({ length: 60_000 }, (_, i) => i) })
const uniqueSchema: Schema = { type: "object", properties: { xs: { type: "array", uniqueItems: true } } }

const normal: ReadonlyArray<Case> = [
  { name: "weather call (18 B)", schema: weather, args: JSON.stringify({ city: "Oslo" }), kind: "check" },
  { name: `agent call, formats, uniqueItems (${agentArgs.length} B)`, schema: agent, args: agentArgs, kind: "check" },
  { name: `800 records and 800 unique ids (${Math.round(recordsArgs.length / 1024)} KB)`, schema: records, args: recordsArgs, kind: "check" },
  { name: `JSON content, response_format (${answerContent.length} B)`, schema: answer, args: answerContent, kind: "content" },
  { name: "repair: a trailing comma (19 B)", schema: weather, args: "{\"city\": \"Oslo\",}", kind: "repair" }
]
const hostile: ReadonlyArray<Case> = [
  { name: "uniqueItems, 60,000 numbers (default bounds)", schema: uniqueSchema, args: numbers, kind: "check" },
  { name: "uniqueItems, 60,000 numbers (bounds raised: checked)", schema: uniqueSchema, args: numbers, kind: "check", limits: raised },
  { name: "format url, 40,000 characters", schema: { type: "object", properties: { u: { type: "string", format: "url" } } }, args: JSON.stringify({ u: `http://${"a".repeat(40_000)}!` }), kind: "check" },
  { name: "jsonrepair, 800 KB crafted (default bounds)", schema: { type: "object" }, args: `{"xs": [${"1 ".repeat(400_000)}]`, kind: "repair" },
  { name: "jsonrepair, 800 KB crafted (arguments bound raised)", schema: { type: "object" }, args: `{"xs": [${"1 ".repeat(400_000)}]`, kind: "repair", limits: raised }
]

// --- before and after ----------------------------------------------------------------------

/** The check as the gateway made it before the bounds. */
const before = (c: Case): (() => boolean) => {
  const validator = new Validator(c.schema as never, "2020-12", false)
  const judge = (text: string) => {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return false
    }
    return withLinearRegExp(() => validator.validate(value)).valid
  }
  if (c.kind !== "repair") return () => judge(c.args)
  return () => {
    let fixed = c.args
    try {
      fixed = jsonrepair(c.args)
    } catch {
      // left as it is
    }
    return judge(fixed)
  }
}

const after = (c: Case): (() => boolean) => {
  const limits = c.limits ?? defaultValidationLimits
  if (c.kind === "content") {
    const check = makeContentCheck({ type: "json_schema", json_schema: { name: "answer", schema: c.schema } }, limits)!
    return () => check(c.args).ok
  }
  const catalog = new ToolCatalog([{ type: "function", function: { name: "f", parameters: c.schema } }], limits)
  const call = { id: "c", type: "function" as const, function: { name: "f", arguments: c.args } }
  return c.kind === "repair" ? () => catalog.repair(call).verdict.ok : () => catalog.check(call).ok
}

if (!isMainThread) {
  // A worker runs one old-path hostile check and reports its time; the main thread stops it at the cap.
  const c = hostile[workerData as number]!
  const check = before(c)
  const started = performance.now()
  check()
  parentPort!.postMessage(performance.now() - started)
} else {
  const { values } = parseArgs({ options: { rounds: { type: "string", default: "15" }, "cap-seconds": { type: "string", default: "20" } } })
  const rounds = wholeNumberOption("--rounds", values.rounds)
  const capSeconds = wholeNumberOption("--cap-seconds", values["cap-seconds"])

  /** Calls per round: enough for a round of about 40 ms. */
  const batchOf = (check: () => boolean): number => {
    let n = 1
    while (true) {
      const started = performance.now()
      for (let i = 0; i < n; i++) check()
      if (performance.now() - started > 10) return n * 4
      n *= 2
    }
  }
  /**
   * CPU time per call (this process's, in µs): on a machine shared with other work a round's
   * wall time counts the time the thread waited for a core too.
   */
  const round = (check: () => boolean, n: number): number => {
    const started = process.cpuUsage()
    for (let i = 0; i < n; i++) check()
    const used = process.cpuUsage(started)
    return (used.user + used.system) / n
  }
  /**
   * Microseconds per call of each path, their rounds alternated so that drift on a shared
   * machine falls on both: the fastest round (the least disturbed) and the median.
   */
  const paired = (old: () => boolean, now: () => boolean) => {
    const n = Math.max(batchOf(old), batchOf(now))
    const olds: Array<number> = []
    const nows: Array<number> = []
    for (let r = 0; r < rounds; r++) {
      olds.push(round(old, n))
      nows.push(round(now, n))
    }
    return { old: Math.min(...olds), now: Math.min(...nows), oldMedian: median(olds), nowMedian: median(nows) }
  }
  const perCall = (check: () => boolean): number => {
    const n = batchOf(check)
    return Math.min(...Array.from({ length: rounds }, () => round(check, n)))
  }
  const micros = (us: number) => (us >= 100 ? us.toFixed(0) : us.toFixed(1))

  console.log(`tool-call checks, µs of CPU per check (fastest of ${rounds} alternated rounds; median in brackets), before and after the bounds\n`)
  const rows: Array<Array<string>> = []
  for (const c of normal) {
    const old = before(c)
    const now = after(c)
    if (old() !== now()) throw new Error(`${c.name}: the two paths disagree`)
    const t = paired(old, now)
    rows.push([c.name, `${micros(t.old)} (${micros(t.oldMedian)})`, `${micros(t.now)} (${micros(t.nowMedian)})`, `${((t.now / t.old - 1) * 100).toFixed(1)}%`])
  }
  console.log(alignedTable(["normal", "before µs", "after µs", "change"], rows, { rule: true }))

  const oldHostile = (index: number): Promise<number | undefined> =>
    new Promise((resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: index })
      const timer = setTimeout(() => void worker.terminate().then(() => resolve(undefined)), capSeconds * 1000)
      worker.once("message", (ms: number) => {
        clearTimeout(timer)
        void worker.terminate().then(() => resolve(ms))
      })
      worker.once("error", (e) => {
        clearTimeout(timer)
        reject(e)
      })
    })
  const hostileRows: Array<Array<string>> = []
  for (let i = 0; i < hostile.length; i++) {
    const c = hostile[i]!
    const now = after(c)
    const verdict = now()
    const nowUs = perCall(now)
    const oldMs = await oldHostile(i)
    hostileRows.push([c.name, oldMs === undefined ? `> ${capSeconds} s` : micros(oldMs * 1000), micros(nowUs), verdict ? "valid" : "invalid"])
  }
  console.log(`\n${alignedTable(["hostile", "before µs", "after µs", "verdict after"], hostileRows, { rule: true })}`)

  // The hop: structured clone of the text and the schema both ways, and the schema compiled on the thread.
  const hopCases: ReadonlyArray<Case> = [
    { name: `64 KB: ${Math.round(recordsArgs.length / 1024)} KB of records and ids`, schema: records, args: recordsArgs, kind: "check" },
    { name: "350 KB: 60,000 unique numbers (bounds raised)", schema: uniqueSchema, args: numbers, kind: "check", limits: raised }
  ]
  const hopRows = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const runner = yield* nodeJobWorkers.start({ workers: 1, memoryMb: 512, queue: 4, deadlineMs: 60_000 })
    const rows: Array<Array<string>> = []
    for (const c of hopCases) {
      const limits = c.limits ?? defaultValidationLimits
      const judge = new Judge({ kind: "tool", name: "f", schema: c.schema }, limits)
      const here = Math.min(...Array.from({ length: rounds }, () => {
        const started = performance.now()
        judge.judge(c.args)
        return (performance.now() - started) * 1000
      }))
      const input = { target: judge.target, text: c.args, limits, repair: false }
      yield* runner.run(judgeJob, input)
      const samples: Array<number> = []
      for (let r = 0; r < rounds; r++) {
        const started = performance.now()
        yield* runner.run(judgeJob, input)
        samples.push((performance.now() - started) * 1000)
      }
      const thread = Math.min(...samples)
      rows.push([c.name, micros(here), micros(thread), micros(thread - here)])
    }
    return rows
  })))
  console.log(`\n${alignedTable(["on a job thread (wall time)", "here µs", "job µs", "hop µs"], hopRows, { rule: true })}`)
}
