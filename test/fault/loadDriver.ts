/**
 * Load for the fault suite: autocannon (its programmatic API) with every
 * request followed on its own connection, so that nothing goes uncounted. With
 * one request at a time per connection, each connection has at most one
 * request out; a request still out when the connection ends, or when the next
 * one is sent after a reconnect, was lost (autocannon itself does not count
 * those). Every outcome is kept with the time the request was sent and the
 * time it ended, so a test can split them at a signal.
 */
import autocannon from "autocannon"

export type Outcome =
  | { readonly kind: "status"; readonly status: number; readonly sentAt: number; readonly endedAt: number }
  | { readonly kind: "error"; readonly code: string; readonly sentAt: number | undefined; readonly endedAt: number }
  | { readonly kind: "lost"; readonly sentAt: number; readonly endedAt: number }

export interface Load {
  readonly outcomes: Array<Outcome>
  /** Bodies autocannon found neither a success nor the documented shutdown answer. */
  mismatches(): number
  /** Stops sending and resolves with autocannon's own result. */
  stop(): Promise<autocannon.Result>
  readonly done: Promise<autocannon.Result>
}

export interface LoadOptions {
  readonly url: string
  readonly path: string
  readonly body: string
  readonly headers: Record<string, string>
  readonly connections: number
  readonly seconds: number
  /** A body is right when this holds (e.g. a success envelope or the shutdown 503). */
  readonly verifyBody: (body: string) => boolean
}

export const startLoad = (options: LoadOptions): Load => {
  const outcomes: Array<Outcome> = []
  let mismatches = 0
  const setupClient = (client: any) => {
    let out: number | undefined
    client.on("request", () => {
      if (out !== undefined) outcomes.push({ kind: "lost", sentAt: out, endedAt: performance.now() })
      out = performance.now()
    })
    client.on("response", (status: number) => {
      outcomes.push({ kind: "status", status, sentAt: out ?? Number.NaN, endedAt: performance.now() })
      out = undefined
    })
    client.on("connError", (error: NodeJS.ErrnoException) => {
      outcomes.push({ kind: "error", code: error.code ?? error.message, sentAt: out, endedAt: performance.now() })
      out = undefined
    })
    client.on("timeout", () => {
      outcomes.push({ kind: "error", code: "TIMEOUT", sentAt: out, endedAt: performance.now() })
      out = undefined
    })
    client.on("mismatch", () => void mismatches++)
  }
  let instance: any
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon({
      url: options.url + options.path,
      method: "POST",
      headers: { "content-type": "application/json", ...options.headers },
      body: options.body,
      connections: options.connections,
      duration: options.seconds,
      timeout: 10,
      verifyBody: options.verifyBody,
      setupClient
    } as autocannon.Options, (error, result) => (error ? reject(error) : resolve(result)))
  })
  return {
    outcomes,
    mismatches: () => mismatches,
    done,
    stop: () => {
      instance.stop()
      return done
    }
  }
}

/** Outcomes counted by what they were, split at `at` (a performance.now() time) by when the request was sent. */
export const tally = (outcomes: ReadonlyArray<Outcome>, at = Number.POSITIVE_INFINITY) => {
  const before: Record<string, number> = {}
  const after: Record<string, number> = {}
  for (const o of outcomes) {
    const key = o.kind === "status" ? String(o.status) : o.kind === "error" ? `error ${o.code}` : "lost"
    const side = (o.sentAt ?? o.endedAt) < at ? before : after
    side[key] = (side[key] ?? 0) + 1
  }
  return { before, after }
}
