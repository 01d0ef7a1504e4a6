/**
 * CPU time a process has used, for benches that divide it by the requests a run answered: a
 * figure that moves less with a noisy machine than requests per second do.
 */
import { readFileSync } from "node:fs"

/** User + system CPU time of a process so far, in microseconds (Linux /proc; NaN elsewhere). */
export const cpuTimeUs = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
    // After the command: state is field 3, utime 14 and stime 15 (1-based), in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100
  } catch {
    return Number.NaN
  }
}
