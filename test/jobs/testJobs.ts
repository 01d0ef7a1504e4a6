/**
 * Jobs for the job runner's tests (jobRunner.test.ts): each does one thing a real job may do
 * wrong, loop, grow, throw, exit, and a few that answer.
 */
import { defineJob } from "../../core/jobs/Job.ts"

/** Its input, back. */
export const echoJob = defineJob<unknown, unknown>(import.meta.url, "echo", (input) => input)

/** Busy for `ms` milliseconds of CPU, without one await: only ending its thread stops it. */
export const spinJob = defineJob<{ readonly ms: number }, number>(import.meta.url, "spin", ({ ms }) => {
  const until = Date.now() + ms
  let turns = 0
  while (Date.now() < until) turns++
  return turns
})

/** Keeps `megabytes` of live objects on the heap (not buffers: the heap limit counts objects). */
export const growJob = defineJob<{ readonly megabytes: number }, number>(import.meta.url, "grow", ({ megabytes }) => {
  const kept: Array<Array<number>> = []
  for (let i = 0; i < megabytes * 16; i++) kept.push(Array.from({ length: 8192 }, (_, j) => i + j + 0.5))
  return kept.length
})

/** Throws with a message of its own. */
export const throwJob = defineJob<{ readonly message: string }, never>(import.meta.url, "throw", ({ message }) => {
  throw new Error(message)
})

/** Ends its thread as a native crash would. */
export const exitJob = defineJob<null, never>(import.meta.url, "exit", (): never => process.exit(3))

/** Where it ran, as "process id/thread id": it changes once a process or thread was replaced. */
export const whereJob = defineJob<null, string>(import.meta.url, "where", async () => `${process.pid}/${(await import("node:worker_threads")).threadId}`)

/** Linux: the nice value of the thread it runs on, from /proc (field 19 of its stat line). */
export const niceJob = defineJob<null, number>(import.meta.url, "nice", async () => {
  const { readFileSync } = await import("node:fs")
  const stat = readFileSync("/proc/thread-self/stat", "utf8")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])
})
