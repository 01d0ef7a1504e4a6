/**
 * The `search.opensearch` section of the config file: the cluster and index
 * the `opensearch` search backend answers from. Credentials are never written
 * here: the section names the environment variables that hold them.
 */
import { Schema } from "effect"
import { INDEX_NAME } from "../backends/search/OpenSearchConnection.ts"
import { ruledNumber, ruledString } from "../schema/Rules.ts"

const optionalKey = Schema.optionalKey
const envNameRule = "must be an environment variable name"
const EnvName = ruledString(envNameRule).check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: envNameRule }))
const urlRule = "must be an http(s) URL of the cluster, without credentials (e.g. http://localhost:9200)"
const indexRule = "must be an index name: lowercase letters, digits, . _ - (e.g. periscope)"

export const OpenSearchConfig = Schema.Struct({
  url: ruledString(urlRule).check(Schema.isPattern(/^https?:\/\/[^\s/@]+(\/[^\s@]*)?$/i, { message: urlRule })),
  index: ruledString(indexRule).check(Schema.isPattern(INDEX_NAME, { message: indexRule })),
  /** Environment variable holding the user name for HTTP Basic auth. */
  usernameEnv: optionalKey(EnvName),
  /** Environment variable holding the password. */
  passwordEnv: optionalKey(EnvName),
  /** Per query. Default 5000. */
  timeoutMs: optionalKey(ruledNumber("must be an integer from 1 to 120000", { integer: true, min: 1, max: 120_000 }))
}).annotate({ message: "must be an object {url, index, usernameEnv?, passwordEnv?, timeoutMs?}" })
export type OpenSearchConfig = typeof OpenSearchConfig.Type
