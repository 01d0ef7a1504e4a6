/**
 * The worker's side of a job pool (core/jobs/WorkerPool.ts): jobs come in as (module URL, name,
 * input), run one at a time in the order they came, and their outputs or errors go back. A
 * module is imported the first time one of its jobs runs, or when the pool asks ahead (a
 * replacement thread loads what its predecessor had loaded), so a thread starts fast and
 * carries only the code of the jobs it is given. An adapter runs `hostJobs` in each thread
 * (adapters/node/jobWorker.ts, adapters/deno/jobWorker.ts).
 *
 * No runtime import of effect here: worker threads load this module.
 */
import { isJob, type Job } from "./Job.ts"

/** A message to a worker: a job to run, or modules to import ahead of their jobs. */
export type ToWorker =
  | { readonly type: "run"; readonly id: number; readonly module: string; readonly name: string; readonly input: unknown }
  | { readonly type: "load"; readonly modules: ReadonlyArray<string> }

/** A message from a worker: started, a job's output or why it failed, and whether to replace the thread now. */
export type FromWorker =
  | { readonly type: "ready" }
  | { readonly type: "done"; readonly id: number; readonly output: unknown; readonly retire?: boolean }
  | { readonly type: "failed"; readonly id: number; readonly message: string; readonly retire?: boolean }

/** The thread's end of the channel to the pool. */
export interface HostPort {
  readonly post: (message: FromWorker, transfer: ReadonlyArray<ArrayBuffer>) => void
  readonly listen: (handler: (message: ToWorker) => void) => void
}

const messageOf = (error: unknown): string => error instanceof Error ? error.message : String(error)

export interface HostOptions {
  /**
   * Asked after each job: true when the thread holds more memory than it should keep (a heap
   * grown by one large page stays grown). The pool then replaces it once it is idle, which
   * hands the memory back at once.
   */
  readonly retire?: (() => boolean) | undefined
}

/** Serves jobs on this thread until it is terminated. */
export const hostJobs = (port: HostPort, options: HostOptions = {}): void => {
  const modules = new Map<string, Promise<Record<string, unknown>>>()
  const load = (module: string): Promise<Record<string, unknown>> => {
    let loaded = modules.get(module)
    if (loaded === undefined) {
      loaded = import(module) as Promise<Record<string, unknown>>
      modules.set(module, loaded)
    }
    return loaded
  }
  const jobs = new Map<string, Job<unknown, unknown>>()
  const find = async (module: string, name: string): Promise<Job<unknown, unknown>> => {
    const key = `${name} ${module}`
    const known = jobs.get(key)
    if (known !== undefined) return known
    const exports = await load(module)
    const job = Object.values(exports).find((value) => isJob(value) && value.name === name)
    if (job === undefined || !isJob(job)) throw new Error(`${module} exports no job named ${name}`)
    jobs.set(key, job)
    return job
  }

  const run = async (message: Extract<ToWorker, { type: "run" }>): Promise<void> => {
    const retire = () => (options.retire?.() === true ? { retire: true } : {})
    try {
      const job = await find(message.module, message.name)
      const output = await job.run(message.input)
      port.post({ type: "done", id: message.id, output, ...retire() }, job.transfer?.(output) ?? [])
    } catch (error) {
      port.post({ type: "failed", id: message.id, message: messageOf(error), ...retire() }, [])
    }
  }

  // One job at a time, in order: the pool counts on the oldest job sent being the one at work.
  let chain: Promise<void> = Promise.resolve()
  port.listen((message) => {
    if (message.type === "load") {
      for (const module of message.modules) load(module).catch(() => undefined)
      return
    }
    chain = chain.then(() => run(message))
  })
  port.post({ type: "ready" }, [])
}
