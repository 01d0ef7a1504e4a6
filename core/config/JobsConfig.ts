/**
 * The `jobs` section of the config file: the workers that do CPU-heavy work (reading HTML and
 * PDF pages for webFetch, large validations) away from the thread that answers requests, and
 * their bounds (core/jobs/JobRunner.ts).
 */
import { Schema } from "effect"
import { DEFAULT_JOB_LIMITS, type JobLimits } from "../jobs/JobRunner.ts"
import { ruledNumber } from "../schema/Rules.ts"

const optionalKey = Schema.optionalKey

export const JobsConfig = Schema.Struct({
  /** Workers (Node: processes; Deno: Web Workers). Default: one fewer than the cores, at least 1, at most 8; the embed library runs jobs on the caller's thread. */
  workers: optionalKey(ruledNumber("must be an integer from 1 to 64", { integer: true, min: 1, max: 64 })),
  /** Heap of each worker in MB (Node); a job that outgrows it is ended (webFetch answers 413). Default 512. */
  memoryMb: optionalKey(ruledNumber("must be an integer from 32 to 16384", { integer: true, min: 32, max: 16_384 })),
  /** Jobs that may wait for a worker; past that, requests are answered 503 with Retry-After. Default 32. */
  queue: optionalKey(ruledNumber("must be an integer from 0 to 100000", { integer: true, min: 0, max: 100_000 })),
  /** Deadline of a job whose caller sets none (webFetch's follows fetch.timeoutMs), waiting included. Default 15000. */
  deadlineMs: optionalKey(ruledNumber("must be an integer from 100 to 300000", { integer: true, min: 100, max: 300_000 })),
  /** Node on Linux: the nice value of the job processes, below the thread answering requests; 0 leaves them. Default 10. */
  nice: optionalKey(ruledNumber("must be an integer from 0 to 19", { integer: true, min: 0, max: 19 }))
}).annotate({ message: "must be an object {workers?, memoryMb?, queue?, deadlineMs?, nice?}" })
export type JobsConfig = typeof JobsConfig.Type

/** The limits the job runner runs with: the file's values over the defaults. */
export const jobLimitsOf = (config: JobsConfig | undefined): JobLimits => ({
  workers: config?.workers,
  memoryMb: config?.memoryMb ?? DEFAULT_JOB_LIMITS.memoryMb,
  queue: config?.queue ?? DEFAULT_JOB_LIMITS.queue,
  deadlineMs: config?.deadlineMs ?? DEFAULT_JOB_LIMITS.deadlineMs,
  nice: config?.nice ?? DEFAULT_JOB_LIMITS.nice
})
