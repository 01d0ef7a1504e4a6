/**
 * Why request paths define their generator functions once (`Effect.fnUntraced` at module or
 * service level) instead of writing `Effect.gen(function*() {...})` inside a per-request
 * function: every generator function made gets its own `prototype`, so each call's generator
 * object has a new hidden class, and V8's caches at the sites that drive generators (Effect's
 * runloop calls `next` for all of them) miss every time.
 *
 *   node test/bench/effectGen.ts [--rounds 15]
 *
 * Side by side, in one process: a plain generator made per call vs defined once (three
 * yields, driven by a loop), and the same three-step effect as `Effect.gen` with a generator
 * made per call vs `Effect.fnUntraced` defined once, each run in a fiber of its own as a
 * request is. Prints microseconds per call: the fastest and the median round.
 */
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { median } from "./support/stats.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values } = parseArgs({ options: { rounds: { type: "string", default: "15" } } })
const rounds = wholeNumberOption("--rounds", values.rounds)

const drive = (iterator: Generator<number, number, number>): number => {
  let step = iterator.next(0)
  while (!step.done) step = iterator.next(step.value)
  return step.value
}
function* definedOnce(x: number): Generator<number, number, number> {
  const a = yield x
  const b = yield a + 1
  yield 0
  return a + b
}
const plainMadePerCall = (x: number) =>
  drive((function*(): Generator<number, number, number> {
    const a = yield x
    const b = yield a + 1
    yield 0
    return a + b
  })())
const plainDefinedOnce = (x: number) => drive(definedOnce(x))

const effectDefinedOnce = Effect.fnUntraced(function*(x: number) {
  const a = yield* Effect.succeed(x)
  const b = yield* Effect.succeed(a + 1)
  yield* Effect.void
  return a + b
})
const effectMadePerCall = (x: number) =>
  Effect.gen(function*() {
    const a = yield* Effect.succeed(x)
    const b = yield* Effect.succeed(a + 1)
    yield* Effect.void
    return a + b
  })

/** n calls, 32 in flight (as the http bench's connections), each effect in a fiber of its own. */
const inFibers = (make: (x: number) => Effect.Effect<number>) => (n: number) => {
  let left = n
  return Promise.all(Array.from({ length: 32 }, async () => {
    while (left-- > 0) await new Promise<void>((done) => Effect.runFork(make(left)).addObserver(() => done()))
  }))
}
const inLoop = (f: (x: number) => number) => (n: number) => {
  let sink = 0
  for (let i = 0; i < n; i++) sink += f(i)
  if (sink === -1) console.log(sink)
}

const cases: ReadonlyArray<{ readonly name: string; readonly calls: number; readonly run: (n: number) => unknown }> = [
  { name: "plain generator, defined once", calls: 200_000, run: inLoop(plainDefinedOnce) },
  { name: "plain generator, made per call", calls: 200_000, run: inLoop(plainMadePerCall) },
  { name: "Effect.fnUntraced, defined once", calls: 20_000, run: inFibers(effectDefinedOnce) },
  { name: "Effect.gen, generator made per call", calls: 20_000, run: inFibers(effectMadePerCall) }
]

for (const c of cases) await c.run(c.calls) // warm-up
const times: Array<Array<number>> = cases.map(() => [])
for (let round = 0; round < rounds; round++) {
  for (let k = 0; k < cases.length; k++) {
    const c = cases[(k + round) % cases.length]!
    const start = performance.now()
    await c.run(c.calls)
    times[cases.indexOf(c)]!.push(((performance.now() - start) * 1000) / c.calls)
  }
}
console.log(`Generator functions made per call vs defined once (${rounds} rounds, rotating order, ${process.version})\n`)
const width = Math.max(...cases.map((c) => c.name.length))
console.log(`${"".padEnd(width)}  fastest µs  median µs`)
cases.forEach((c, i) => {
  console.log(`${c.name.padEnd(width)}  ${Math.min(...times[i]!).toFixed(2).padStart(10)}  ${median(times[i]!).toFixed(2).padStart(9)}`)
})
