/**
 * What /readyz asks before it says a load balancer may send traffic here:
 * named checks (the index loaded, the shared store reachable when one is
 * configured), composed in core/app. Each answers a short detail or the reason
 * it is not ready; none may take longer than the probe's own deadline.
 */
import { Context, Duration, Effect } from "effect"

export interface ReadinessCheck {
  readonly name: string
  /** A short detail when ready ("12000 documents"), the reason when not. */
  readonly check: Effect.Effect<string, string>
}

export interface ReadinessReport {
  readonly ready: boolean
  readonly checks: Record<string, { readonly ok: boolean; readonly detail: string }>
}

const deadline = Duration.seconds(2)

export class Readiness extends Context.Service<Readiness, {
  readonly report: Effect.Effect<ReadinessReport>
}>()("periscope/api/Readiness") {
  static readonly make = (checks: ReadonlyArray<ReadinessCheck>) =>
    Readiness.of({
      report: Effect.map(
        Effect.forEach(checks, (c) =>
          c.check.pipe(
            Effect.timeoutOrElse({ duration: deadline, orElse: () => Effect.fail(`no answer within ${Duration.format(deadline)}`) }),
            Effect.match({ onSuccess: (detail) => ({ ok: true, detail }), onFailure: (detail) => ({ ok: false, detail }) }),
            Effect.map((result) => [c.name, result] as const)
          ), { concurrency: "unbounded" }),
        (results) => ({ ready: results.every(([, r]) => r.ok), checks: Object.fromEntries(results) })
      )
    })
}

/** Name and version of this build; the commit when the runtime knows it (PERISCOPE_COMMIT on Node). */
export const BuildInfo = Context.Reference<{ readonly commit: string | undefined }>("periscope/api/BuildInfo", {
  defaultValue: () => ({ commit: undefined })
})
