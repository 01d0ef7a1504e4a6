/**
 * How /searxng/search admits callers without a key: never (the default), or from a private
 * network when the config file's `searxng.openOnPrivateNetwork` says so. Opening it is said at
 * start as a warning, on every adapter, since anyone on that network can then search.
 */
import { Context, Effect, Layer } from "effect"

export interface SearxngOptionsShape {
  /** Callers whose connecting address is loopback or private need no key. */
  readonly openOnPrivateNetwork: boolean
  /** The one limit all keyless callers share, in requests per minute. */
  readonly openRequestsPerMinute: number
}

export const SearxngOptions = Context.Reference<SearxngOptionsShape>("periscope/api/searxng/SearxngOptions", {
  defaultValue: () => ({ openOnPrivateNetwork: false, openRequestsPerMinute: 0 })
})

/** The options, with the warning logged once when the route is opened. */
export const searxngOptionsLayer = (options: SearxngOptionsShape): Layer.Layer<never> =>
  Layer.mergeAll(
    Layer.succeed(SearxngOptions, options),
    options.openOnPrivateNetwork
      ? Layer.effectDiscard(Effect.logWarning(
        "searxng.openOnPrivateNetwork is on: /searxng/search answers callers on loopback and private networks WITHOUT an API key " +
          `(all of them together limited to ${options.openRequestsPerMinute} requests per minute); behind a reverse proxy on a private ` +
          "address every caller looks private: keep it off there"
      ))
      : Layer.empty
  )
