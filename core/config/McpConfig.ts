/**
 * The `mcp` section of the config file: which browser origins may call /mcp.
 * MCP asks servers to check Origin against DNS rebinding; an origin naming the
 * server's own loopback or IP address is always accepted, others only here.
 */
import { Schema } from "effect"
import { ruledString } from "../schema/Rules.ts"

const originRule = "must be an origin: http(s)://host[:port], without a path"

export const McpConfig = Schema.Struct({
  /** Browser origins allowed to call /mcp, e.g. "https://agents.example.com". Default none. */
  allowedOrigins: Schema.optionalKey(
    Schema.Array(ruledString(originRule).check(Schema.isPattern(/^https?:\/\/(?:\[[0-9A-Fa-f:.]+\]|[^\s/:[\]@]+)(?::\d{1,5})?$/, { message: originRule })))
      .annotate({ message: "must be an array of origins" })
      .check(Schema.isMaxLength(64, { message: "must list at most 64 origins" }))
  )
}).annotate({ message: "must be an object {allowedOrigins?}" })
export type McpConfig = typeof McpConfig.Type
