import { Context, Duration, Effect } from "effect"

/** Tunables of the HTTP layer that adapters may override from configuration. */
export interface ServerOptionsShape {
  /** Silence on a chat stream before a keep-alive comment line is sent. */
  readonly streamKeepAlive: Duration.Duration
}

export const ServerOptions = Context.Reference<ServerOptionsShape>("periscope/api/ServerOptions", {
  defaultValue: () => ({ streamKeepAlive: Duration.seconds(15) })
})

/**
 * How an adapter ends open chat streams at shutdown: when `streamsEnd`
 * completes, every open stream sends an error event and `data: [DONE]` and
 * closes, so clients learn why instead of seeing a cut connection (a stream
 * still waiting for its first event is answered 503 with that error).
 */
export interface ServerLifecycleShape {
  readonly streamsEnd: Effect.Effect<void>
}

export const ServerLifecycle = Context.Reference<ServerLifecycleShape>("periscope/api/ServerLifecycle", {
  defaultValue: () => ({ streamsEnd: Effect.never })
})
