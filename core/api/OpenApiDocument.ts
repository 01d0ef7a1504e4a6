/**
 * What /openapi.json says beyond what effect/http-api derives from the
 * contract, applied as the API's OpenApi transform:
 * - request bodies as open as the decoder: it ignores unknown keys (as OpenAI
 *   does), so no request schema says `additionalProperties: false` (the
 *   generator closes every object); the Responses API's, Tavily's and
 *   SearXNG's requests stay closed, as their decoders refuse unknown fields
 *   (the Responses API's but for its input items). Responses
 *   stay closed: they are exactly what we send, and the tests check every
 *   answer against them;
 * - a description for each status and the headers an error carries;
 * - the event stream of `stream: true`: one event's `data` schema (a
 *   chat.completion.chunk, or an error object after a failure) under an `x-`
 *   extension, since OpenAPI 3.1 has no field for it (3.2's itemSchema).
 */

/** The extension on the text/event-stream media type naming the schema of each event's JSON `data`. */
export const SSE_DATA_EXTENSION = "x-sse-data"
/** The extension naming the last event's `data`, which is not JSON. */
export const SSE_END_EXTENSION = "x-sse-end"

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

type Json = Record<string, any>

/** Status descriptions; webFetch (search envelope, site failures) differs on a few. */
const STATUS_TEXT: Record<string, string> = {
  "400": "Invalid request: the body is not JSON or breaks a rule; the message names the field and the rule",
  "401": "Missing or unknown API key (send Authorization: Bearer <key>)",
  "404": "The model is not one this service answers for (see /v1/models)",
  "413": "The request body is over the limit (1 MiB for search, 16 MiB for chat, 256 KiB for Tavily's, 64 KiB for SearXNG's form)",
  "415": "Content-Type is not application/json",
  "429": "Rate limited (the key's limit; for chat also the upstream's); Retry-After says when to try again",
  "500": "Internal error; the failure was logged, no detail is sent",
  "502": "A backend (search source or chat upstream) failed",
  "503": "Unavailable: a backend or the shared rate-limit store is down, or the server is shutting down (Retry-After)",
  "504": "A backend did not answer in time"
}
const WEB_FETCH_TEXT: Record<string, string> = {
  "400": "Invalid request (the message names the field and the rule), or the URL is not an absolute http(s) URL",
  "403": "The address is refused by the fetch address policy (private, loopback or not allowed names)",
  "413": "The request body, or the fetched page, is over its size limit",
  "415": "Content-Type is not application/json, or the page's content type cannot be read",
  "501": "Rendering was asked for (render: always) and this server has no browser; the message says what to install",
  "502": "The site answered with an error status, or the fetch failed",
  "504": "The site did not answer in time"
}
/** The map reads pages as webFetch does, and honours robots.txt. */
const MAP_TEXT: Record<string, string> = {
  ...WEB_FETCH_TEXT,
  "403": "The address is refused by the fetch address policy (private, loopback or not allowed names), or robots.txt lets no page of the site be read",
  "502": "The site answered with an error status, its robots.txt could not be read, or the fetch failed"
}
/** SearXNG's POST takes its form, not JSON; its 401 also comes when the private-network setting does not open it to the caller. */
const SEARXNG_TEXT: Record<string, string> = {
  "401": "Missing or unknown API key (send Authorization: Bearer <key>; no key is needed from a private network when searxng.openOnPrivateNetwork is on)",
  "415": "Content-Type is not application/x-www-form-urlencoded"
}
/** Tavily's clients may send the key in the body. */
const TAVILY_TEXT: Record<string, string> = {
  "401": "Missing or unknown API key (send Authorization: Bearer <key>, or api_key in the body)"
}
const SHUTTING_DOWN = "the server is shutting down (the Node server answers every new request so while it drains)"

const RETRY_AFTER = { description: "Seconds until a retry may succeed", schema: { type: "string", pattern: "^[0-9]+$" } }
const WWW_AUTHENTICATE = { description: "Bearer", schema: { type: "string" } }

/** Removes `additionalProperties: false` under a request schema, following $refs into components once. */
const open = (schema: unknown, components: Json, seen: Set<string>): void => {
  if (Array.isArray(schema)) {
    for (const item of schema) open(item, components, seen)
    return
  }
  if (typeof schema !== "object" || schema === null) return
  const node = schema as Json
  if (typeof node.$ref === "string" && node.$ref.startsWith("#/components/schemas/")) {
    const name = node.$ref.slice("#/components/schemas/".length)
    if (!seen.has(name)) {
      seen.add(name)
      open(components[name], components, seen)
    }
  }
  if (node.additionalProperties === false) delete node.additionalProperties
  for (const [key, value] of Object.entries(node)) if (key !== "$ref") open(value, components, seen)
}

const describeResponses = (operation: Json, path: string): void => {
  const responses: Json = operation.responses ?? {}
  const health = operation.security === undefined || operation.security.length === 0
  for (const [status, response] of Object.entries(responses) as Array<[string, Json]>) {
    if (status.startsWith("2")) continue
    const text = health && status === "503"
      ? (path === "/readyz" ? `Not ready: a check failed (the body lists each check), or ${SHUTTING_DOWN}` : `Unavailable: ${SHUTTING_DOWN}`)
      : (path === "/api/search/webFetch" ? WEB_FETCH_TEXT : path === "/api/search/map" ? MAP_TEXT : path.startsWith("/searxng/") ? SEARXNG_TEXT : path.startsWith("/tavily/") ? TAVILY_TEXT : {})[status] ??
        STATUS_TEXT[status]
    if (text !== undefined) response.description = text
    if (status === "401") response.headers = { ...response.headers, "WWW-Authenticate": { ...WWW_AUTHENTICATE, required: true } }
    if (status === "429" || status === "503") response.headers = { ...response.headers, "Retry-After": { ...RETRY_AFTER, required: false } }
  }
}

/** The Responses API's request: closed as its decoder is (unknown fields refused), but for what a client echoes back. */
const RESPONSES_PATH = "/v1/responses"
/** Tavily's and SearXNG's wires refuse unknown fields (a misspelt option would change the answer unseen): their requests stay closed. */
const CLOSED_REQUESTS = ["/tavily/", "/searxng/"]

const describeEventStream = (operation: Json, path: string): void => {
  const media: Json | undefined = operation.responses?.["200"]?.content?.["text/event-stream"]
  if (media === undefined) return
  if (path === RESPONSES_PATH) {
    media[SSE_DATA_EXTENSION] = ref("ResponseStreamEvent")
    operation.responses["200"].description =
      "A response (application/json); with stream: true, server-sent events (text/event-stream) named by their type, each with a sequence_number"
    return
  }
  media[SSE_DATA_EXTENSION] = { anyOf: [ref("ChatCompletionChunk"), ref("OpenAIErrorBody")] }
  media[SSE_END_EXTENSION] = "[DONE]"
  operation.responses["200"].description =
    "A chat.completion (application/json); with stream: true, server-sent events (text/event-stream) of chat.completion.chunk"
}

/** The OpenApi transform of PeriscopeApi. */
export const finishDocument = (spec: Json): Json => {
  const components: Json = spec.components?.schemas ?? {}
  const seen = new Set<string>()
  for (const [path, item] of Object.entries(spec.paths ?? {}) as Array<[string, Json]>) {
    for (const operation of Object.values(item) as Array<Json>) {
      if (typeof operation !== "object" || operation === null || operation.responses === undefined) continue
      if (path === RESPONSES_PATH) {
        // Input items are read open (a client sends an earlier answer's items back whole), as is stream_options.
        open(components.ResponseInputItem, components, seen)
        open(components.ResponseCreateRequest?.properties?.stream_options, components, seen)
      } else if (!CLOSED_REQUESTS.some((prefix) => path.startsWith(prefix))) open(operation.requestBody, components, seen)
      describeResponses(operation, path)
      describeEventStream(operation, path)
    }
  }
  const bearer: Json | undefined = spec.components?.securitySchemes?.bearer
  if (bearer !== undefined) bearer.description = "An API key of the keys file, sent as Authorization: Bearer <key>"
  return spec
}
