/**
 * A job thread of the Deno adapter (adapters/deno/denoJobWorkers.ts): core/jobs/JobHost.ts over
 * this Web Worker's messages. Each job's module is imported when its first job comes.
 */
import { type FromWorker, hostJobs, type ToWorker } from "../../core/jobs/JobHost.ts"

const scope = globalThis as unknown as {
  postMessage(message: FromWorker, transfer: Array<ArrayBuffer>): void
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null
}
hostJobs({
  post: (message, transfer) => scope.postMessage(message, [...transfer]),
  listen: (handler) => {
    scope.onmessage = (event) => handler(event.data)
  }
})
