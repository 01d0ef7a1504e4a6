/**
 * The `searxng` section of the config file: whether the SearXNG-compatible /searxng/search
 * may be called without an API key from a private network. SearXNG itself takes no key and
 * many of its callers cannot send a header; the route still takes the key from those that can.
 */
import { Schema } from "effect"

export const SearxngConfig = Schema.Struct({
  /**
   * Answer /searxng/search without a key when the connecting address is loopback or private
   * (10/8, 172.16/12, 192.168/16, 100.64/10, link-local, fc00::/7). Keyless callers share one
   * limit of rateLimitPerMinute. Default false; the server logs a warning at start when true.
   */
  openOnPrivateNetwork: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" }))
}).annotate({ message: "must be an object {openOnPrivateNetwork?}" })
export type SearxngConfig = typeof SearxngConfig.Type
