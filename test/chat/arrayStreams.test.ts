import { Effect, Ref, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { mapArrays, stepArrays, withEnd } from "../../core/chat/ArrayStreams.ts"

/** A stream pulled as the given arrays, recording how many were pulled. */
const arrays = (chunks: ReadonlyArray<ReadonlyArray<number>>, pulled: { count: number }) =>
  Stream.fromIterable(chunks).pipe(
    Stream.tap(() => Effect.sync(() => pulled.count++)),
    Stream.flatMap((array) => Stream.fromArray(array as Array<number>))
  )

const run = <A, E>(stream: Stream.Stream<A, E>) => Effect.runPromise(Stream.runCollect(stream))

describe("mapArrays", () => {
  it("maps each array to any number of elements, skipping arrays that map to none", async () => {
    const out = await run(mapArrays(Stream.fromArrays([1, 2], [3], [4, 5, 6]), (array) => array.filter((n) => n % 2 === 0).map((n) => n * 10)))
    expect(out).toEqual([20, 40, 60])
  })

  it("passes failures on", async () => {
    const failing = Stream.concat(Stream.fromArray([1, 2]), Stream.fail("broken"))
    const exit = await Effect.runPromise(Effect.exit(Stream.runCollect(mapArrays(failing, (array) => [...array]))))
    expect(exit._tag).toBe("Failure")
  })
})

describe("stepArrays", () => {
  it("steps every element, synchronous answers and Effects alike, in order", async () => {
    const out = await run(stepArrays(
      Stream.fromArrays([1, 2, 3], [4]),
      (n) => (n % 2 === 0 ? Effect.succeed([n, n]) : [n]),
      () => false
    ))
    expect(out).toEqual([1, 2, 2, 3, 4, 4])
  })

  it("ends after the element for which stop holds (as Stream.takeUntil)", async () => {
    const pulled = { count: 0 }
    let seen = 0
    const out = await run(stepArrays(arrays([[1, 2], [3, 4], [5]], pulled), (n) => {
      seen = n
      return [n]
    }, () => seen === 3))
    expect(out).toEqual([1, 2, 3])
  })

  it("stops after an element answered with an Effect, too", async () => {
    const stopped = await Effect.runPromise(Effect.gen(function*() {
      const flag = yield* Ref.make(false)
      let stop = false
      const out = yield* Stream.runCollect(stepArrays(
        Stream.fromArrays([1, 2, 3]),
        (n) => (n === 2 ? Effect.as(Effect.andThen(Ref.set(flag, true), Effect.sync(() => { stop = true })), [n * 100]) : [n]),
        () => stop
      ))
      return { out, flag: yield* Ref.get(flag) }
    }))
    expect(stopped).toEqual({ out: [1, 200], flag: true })
  })

  it("fails with the step's failure", async () => {
    const exit = await Effect.runPromise(Effect.exit(Stream.runCollect(stepArrays(
      Stream.fromArray([1, 2]),
      (n) => (n === 2 ? Effect.fail("bad" as const) : [n]),
      () => false
    ))))
    expect(exit._tag).toBe("Failure")
  })
})

describe("withEnd", () => {
  it("gives the stream's elements, then the end's, once the stream is done", async () => {
    let ends = 0
    const out = await run(withEnd(Stream.fromArrays([1, 2], [3]), () => {
      ends++
      return [9, 10]
    }))
    expect(out).toEqual([1, 2, 3, 9, 10])
    expect(ends).toBe(1)
  })

  it("runs an end that is an Effect only after the last element, and passes its failure on", async () => {
    const order: Array<string> = []
    const out = await run(withEnd(Stream.fromArray([1, 2]).pipe(Stream.tap((n) => Effect.sync(() => order.push(`element ${n}`)))), () =>
      Effect.sync(() => {
        order.push("end")
        return [3]
      })))
    expect(out).toEqual([1, 2, 3])
    expect(order).toEqual(["element 1", "element 2", "end"])
    const exit = await Effect.runPromise(Effect.exit(Stream.runCollect(withEnd(Stream.fromArray([1]), () => Effect.fail("late" as const)))))
    expect(exit._tag === "Failure" && String(exit.cause)).toContain("late")
  })

  it("ends with the stream when the end gives nothing, and an empty stream still gets its end", async () => {
    expect(await run(withEnd(Stream.fromArray([1]), () => []))).toEqual([1])
    expect(await run(withEnd(Stream.empty, () => [7]))).toEqual([7])
  })

  it("does not run the end when the stream fails", async () => {
    let ended = false
    const failing = Stream.concat(Stream.fromArray([1]), Stream.fail("broken" as const))
    const exit = await Effect.runPromise(Effect.exit(Stream.runCollect(withEnd(failing, () => {
      ended = true
      return [2]
    }))))
    expect(exit._tag).toBe("Failure")
    expect(ended).toBe(false)
  })

  it("after a stream cut short by stepArrays, still runs the end", async () => {
    let seen = 0
    const out = await run(withEnd(stepArrays(Stream.fromArrays([1, 2], [3, 4]), (n) => {
      seen = n
      return [n]
    }, () => seen === 2), () => [100]))
    expect(out).toEqual([1, 2, 100])
  })
})
