/**
 * The configuration file (PERISCOPE_CONFIG, JSON): what does not fit in
 * environment variables. Environment variables win over the file.
 * Every setting is listed in the README's configuration table.
 */
import { Schema } from "effect"
import { ruledNumber, ruledString } from "../schema/Rules.ts"
import { ChatConfig } from "./ChatConfig.ts"

const optionalKey = Schema.optionalKey

export const SearchConfig = Schema.Struct({
  /** "engine": the embedded engine over a snapshot (default); "fixture": documents from a JSONL file, term overlap. */
  backend: optionalKey(Schema.Literals(["engine", "fixture"]).annotate({ message: "must be \"engine\" or \"fixture\"" })),
  /** Snapshot file of the engine; default <dataDir>/index.snapshot. */
  snapshot: optionalKey(ruledString("must be a file path")),
  /** JSONL documents {url, title, text, date?, images?} for the fixture backend. */
  documents: optionalKey(ruledString("must be a file path"))
}).annotate({ message: "must be an object" })

export const ConfigFile = Schema.Struct({
  port: optionalKey(ruledNumber("must be an integer from 1 to 65535", { integer: true, min: 1, max: 65535 })),
  host: optionalKey(ruledString("must be a host name or address")),
  dataDir: optionalKey(ruledString("must be a directory path")),
  keysFile: optionalKey(ruledString("must be a file path")),
  /** Requests per minute for keys without their own limit (env keys, the generated key). */
  rateLimitPerMinute: optionalKey(ruledNumber("must be an integer >= 1", { integer: true, min: 1 })),
  /** Seconds of silence before a keep-alive comment on a chat stream. */
  streamKeepAliveSeconds: optionalKey(ruledNumber("must be a number > 0", { exclusiveMin: 0 })),
  /** Log one line per request (method, path, status, time). Default false. */
  logRequests: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  search: optionalKey(SearchConfig),
  chat: optionalKey(ChatConfig)
}).annotate({ message: "must be a JSON object" })
export type ConfigFile = typeof ConfigFile.Type
