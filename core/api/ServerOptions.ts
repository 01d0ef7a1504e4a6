import { Context, Duration } from "effect"

/** Tunables of the HTTP layer that adapters may override from configuration. */
export interface ServerOptionsShape {
  /** Silence on a chat stream before a keep-alive comment line is sent. */
  readonly streamKeepAlive: Duration.Duration
}

export const ServerOptions = Context.Reference<ServerOptionsShape>("periscope/api/ServerOptions", {
  defaultValue: () => ({ streamKeepAlive: Duration.seconds(15) })
})

/**
 * How an adapter ends open chat streams at shutdown: when it signals the end,
 * every open stream sends an error event and `data: [DONE]` and closes, so
 * clients learn why instead of seeing a cut connection (a stream still
 * waiting for its first event is answered 503 with that error). A listener
 * per stream, not a fiber per stream waiting on an Effect.
 */
export interface StreamsEnd {
  /** Calls `listener` once, when open streams are to end (at once if they already are); returns its removal. */
  readonly onEnd: (listener: () => void) => () => void
}

/** A StreamsEnd an adapter signals with `end()`. */
export const makeStreamsEnd = (): StreamsEnd & { readonly end: () => void } => {
  let ended = false
  const listeners = new Set<() => void>()
  return {
    onEnd: (listener) => {
      if (ended) {
        listener()
        return () => {}
      }
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    end: () => {
      ended = true
      for (const listener of listeners) listener()
      listeners.clear()
    }
  }
}

/** Streams that end only with their answer (an adapter without a drain). */
const neverEnd: StreamsEnd = { onEnd: () => () => {} }

export interface ServerLifecycleShape {
  readonly streamsEnd: StreamsEnd
}

export const ServerLifecycle = Context.Reference<ServerLifecycleShape>("periscope/api/ServerLifecycle", {
  defaultValue: () => ({ streamsEnd: neverEnd })
})
