/**
 * Stop sequences enforced by the gateway, across chunk boundaries. Text is
 * fed in deltas; what can be shown is released at once, except a tail that
 * could still be the start of a stop sequence, held until the next delta
 * decides it. Plain string work, one scanner per choice.
 */
export class StopScanner {
  private readonly stops: ReadonlyArray<string>
  /** Longest stop sequence minus one: the most text that can be a partial match. */
  private readonly holdLength: number
  private held = ""
  private stoppedAt = false

  constructor(stops: ReadonlyArray<string>) {
    this.stops = stops.filter((s) => s.length > 0)
    this.holdLength = Math.max(0, ...this.stops.map((s) => s.length - 1))
  }

  get stopped(): boolean {
    return this.stoppedAt
  }

  /** Feeds a delta; returns the text that may be shown now (empty after a stop). */
  push(delta: string): string {
    if (this.stoppedAt) return ""
    if (this.stops.length === 0) return delta
    const text = this.held + delta
    let cut = -1
    for (const stop of this.stops) {
      const at = text.indexOf(stop)
      if (at !== -1 && (cut === -1 || at < cut)) cut = at
    }
    if (cut !== -1) {
      this.stoppedAt = true
      this.held = ""
      return text.slice(0, cut)
    }
    // Hold the longest suffix that is a prefix of some stop sequence.
    const keep = this.partialSuffix(text)
    this.held = text.slice(text.length - keep)
    return text.slice(0, text.length - keep)
  }

  /** At the end of the text: whatever was held is shown. */
  flush(): string {
    const out = this.stoppedAt ? "" : this.held
    this.held = ""
    return out
  }

  private partialSuffix(text: string): number {
    const max = Math.min(this.holdLength, text.length)
    for (let len = max; len > 0; len--) {
      const suffix = text.slice(text.length - len)
      for (const stop of this.stops) if (stop.startsWith(suffix)) return len
    }
    return 0
  }
}

/** Cuts whole text at the first stop sequence; `stopped` tells whether one was found. */
export const applyStops = (text: string, stops: ReadonlyArray<string>): { readonly text: string; readonly stopped: boolean } => {
  const scanner = new StopScanner(stops)
  const shown = scanner.push(text)
  return scanner.stopped ? { text: shown, stopped: true } : { text: shown + scanner.flush(), stopped: false }
}
