/**
 * How the server's process runs V8, set by its entry point (main.ts): V8's background threads
 * yield the CPU to the threads that answer requests.
 */
import { readdirSync, readFileSync } from "node:fs"
import { setPriority } from "node:os"

/** The thread name V8's platform gives its worker threads (Node's NodePlatform pool). */
const V8_WORKER = "V8Worker"

/**
 * Sets the nice value of this process's V8 worker threads (the helpers of its garbage collector
 * and compiler) to `nice`, below the threads that answer requests. On a machine with few cores
 * a helper otherwise keeps a CPU for a whole scheduler tick while the event loop's thread, woken
 * by a request, waits for one (docs/performance.md: where the gateway's sequential p99 goes). A niced helper
 * still gets the CPU whenever nothing else wants it, and V8 finishes on the main thread what its
 * helpers have not done. Raising a nice value needs no privilege. Linux only (threads are found
 * in /proc by their name). Returns how many threads it changed: 0 for `nice` 0, off Linux, or
 * without /proc.
 */
export const niceV8Workers = (nice: number): number => {
  if (nice === 0 || process.platform !== "linux") return 0
  let tasks: Array<string>
  try {
    tasks = readdirSync("/proc/self/task")
  } catch {
    return 0
  }
  let changed = 0
  for (const tid of tasks) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() !== V8_WORKER) continue
      // On Linux setpriority(2) with a thread id sets that thread's nice value alone.
      setPriority(Number(tid), nice)
      changed++
    } catch {
      // The thread has ended, or may not be changed: it keeps its priority.
    }
  }
  return changed
}
