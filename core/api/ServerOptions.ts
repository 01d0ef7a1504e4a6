import { Context, Duration } from "effect"

/** Tunables of the HTTP layer that adapters may override from configuration. */
export interface ServerOptionsShape {
  /** Silence on a chat stream before a keep-alive comment line is sent. */
  readonly streamKeepAlive: Duration.Duration
}

export const ServerOptions = Context.Reference<ServerOptionsShape>("periscope/api/ServerOptions", {
  defaultValue: () => ({ streamKeepAlive: Duration.seconds(15) })
})
