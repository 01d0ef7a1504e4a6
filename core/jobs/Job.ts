/**
 * A job: CPU-heavy work that a JobRunner may run on another thread (core/jobs/JobRunner.ts).
 * Its input and output cross threads by structured clone, so they are plain data. A worker
 * finds the job again by the URL of the module that defines it and its name: define a job at
 * the top level of its module and export it, and the worker imports only what that module needs.
 *
 * No runtime import of effect here: worker threads load this module.
 */

export interface Job<I, O> {
  /** Unique within its module; names the job in errors. */
  readonly name: string
  /** `import.meta.url` of the module that exports the job. */
  readonly module: string
  /** The work; throwing (or rejecting) fails the job with the error's message. */
  readonly run: (input: I) => O | Promise<O>
  /** Buffers of the output to move to the caller's thread instead of copying them. */
  readonly transfer?: ((output: O) => ReadonlyArray<ArrayBuffer>) | undefined
}

const JOB = Symbol.for("periscope/jobs/Job")

/**
 * A job exported by the module at `module` (pass `import.meta.url`). `run` must be a
 * function of its input alone: on a worker it is all the module state there is.
 */
export const defineJob = <I, O>(
  module: string,
  name: string,
  run: (input: I) => O | Promise<O>,
  options: { readonly transfer?: (output: O) => ReadonlyArray<ArrayBuffer> } = {}
): Job<I, O> => ({ [JOB]: true, name, module, run, transfer: options.transfer }) as Job<I, O>

export const isJob = (value: unknown): value is Job<unknown, unknown> =>
  typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[JOB] === true
