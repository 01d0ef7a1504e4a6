/**
 * Periscope's MCP tools, each a thin face over a service the REST API uses:
 * web_search and image_search over FederatedSearch, web_fetch and map_site over
 * WebFetch, answer over the chat gateway's grounding. Arguments are decoded with the REST
 * bodies' own rules (so a bad one gets the same message); results come as text
 * a model reads well and as the same data in structuredContent.
 */
import { Effect, Schema } from "effect"
import { ChatGateway } from "../../chat/ChatGateway.ts"
import type { ChatCompletionRequest } from "../../chat/ChatRequest.ts"
import { toChatRequest } from "../../chat/ChatRequest.ts"
import { decoderFor } from "../../schema/Decode.ts"
import { invalid, type InvalidInput } from "../../schema/InvalidInput.ts"
import { FederatedSearch } from "../../search/FederatedSearch.ts"
import type { SearchExtra } from "../../search/Provenance.ts"
import type { QueryCorrections } from "../../search/QueryCorrections.ts"
import type { SearchBackendError } from "../../search/SearchError.ts"
import { contentOptionsIssue, SearchOptionFields } from "../../search/SearchQuery.ts"
import type { ImageResult, WebResult } from "../../search/SearchResult.ts"
import { WebFetch, type WebFetchError } from "../../search/WebFetch.ts"
import { FetchRequestBody, fetchUrl, MapRequestBody } from "../FetchWire.ts"
import { SearchBody, toSearchQuery } from "../SearchWire.ts"
import type { JsonSchemaObject, McpToolSpec, ToolAnnotations, ToolOutcome } from "./McpTool.ts"

/** The services the tools answer with. */
export type McpToolServices = FederatedSearch | WebFetch | ChatGateway

const ARGUMENTS = "arguments"

/**
 * Folds the `allOf` parts a checked schema emits (a rule's bounds and a later description) into
 * their node, so that a client reading only `description` shows the model both the human text
 * and the rule.
 */
const foldAllOf = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(foldAllOf)
  if (typeof node !== "object" || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) out[key] = foldAllOf(value)
  const parts = out.allOf
  if (!Array.isArray(parts) || !parts.every((part) => typeof part === "object" && part !== null && !("$ref" in part))) return out
  delete out.allOf
  for (const part of parts as Array<Record<string, unknown>>) {
    for (const [key, value] of Object.entries(part)) {
      if (key === "description" && typeof out.description === "string") out.description = `${value} (${out.description})`
      else if (!(key in out)) out[key] = value
    }
  }
  return out
}

/** A tool's JSON Schema from its Effect Schema: an object root, definitions inlined under $defs. */
const jsonSchemaOf = (schema: Schema.Top): JsonSchemaObject => {
  const document = Schema.toJsonSchemaDocument(schema)
  const definitions = Object.keys(document.definitions).length === 0 ? {} : { $defs: document.definitions }
  return foldAllOf({ ...document.schema, ...definitions }) as JsonSchemaObject
}

const readOnly = (title: string, openWorld: boolean): ToolAnnotations => ({
  title,
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: openWorld
})

const failed = (text: string): ToolOutcome => ({ text, isError: true })

/** A search failure told so the model can act on it. */
const searchFailure = (error: SearchBackendError): ToolOutcome =>
  failed(
    error.reason === "timeout"
      ? `The search timed out (${error.message}). Try again, or ask for fewer sources.`
      : `The search failed (${error.message}). Try again later, or with other sources.`
  )

const sourceSelection = (error: { readonly path: string; readonly message: string }): InvalidInput =>
  invalid(ARGUMENTS, error.path, error.message.replace(/^[^:]*: /, ""))

// ---------------------------------------------------------------------------
// web_search

const { explain: _explain, ...searchOptions } = SearchOptionFields
const WebSearchArguments = Schema.Struct({
  query: SearchBody.fields.keywords.annotate({ description: "What to search for: keywords or a question." }),
  num: SearchBody.fields.num,
  ...searchOptions
})

const WebSearchOutput = Schema.Struct({
  query: Schema.String,
  /** What the local index corrected in the query: each misspelt word and its correction, and whether the results are the corrected query's. */
  corrections: Schema.optionalKey(Schema.Struct({
    query: Schema.String,
    searched: Schema.Boolean,
    words: Schema.Array(Schema.Struct({ from: Schema.String, to: Schema.String }))
  })),
  results: Schema.Array(Schema.Struct({
    position: Schema.Int,
    title: Schema.String,
    url: Schema.String,
    snippet: Schema.String,
    date: Schema.NullOr(Schema.String),
    content: Schema.optionalKey(Schema.String)
  }))
})

/** The corrections `extra` carries (a correction whose query was searched), if any. */
const correctionsIn = (extra: SearchExtra): QueryCorrections | undefined =>
  extra !== null && "corrections" in extra ? extra.corrections : undefined

/** How the results' query came to differ from the one asked, for the model to know (and undo). */
const correctionText = (corrections: QueryCorrections | undefined) =>
  corrections === undefined || !corrections.searched
    ? []
    : [`Spelling corrected: ${corrections.words.map((w) => `"${w.from}" to "${w.to}"`).join(", ")} (quote a word to search it as typed).`]

const webResultsText = (query: string, results: ReadonlyArray<WebResult>, corrections?: QueryCorrections) =>
  [
    ...correctionText(corrections),
    `Results for "${query}":`,
    ...results.map((r) => `\n[${r.position}] ${r.title}\nURL: ${r.link}${r.date === null ? "" : `\nDate: ${r.date}`}\n${r.content ?? r.snippet}`)
  ].join("\n")

const webSearch = (search: FederatedSearch["Service"]): McpToolSpec<never> => ({
  name: "web_search",
  description: "Search the web (Periscope's own index and any live search providers it is configured with) and get ranked pages: " +
    "title, URL, date and a snippet around the words of the query. Use it to find pages about a topic or answer a question " +
    "with sources; then read a page whole with web_fetch. Options narrow by date (freshness), language, region, domains " +
    "(includeDomains, excludeDomains) and source; content: \"highlights\" gives each result the passages of its page most " +
    "relevant to the query (\"markdown\" or \"text\": the page's main content), within maxCharsPerResult and a total maxTokens. " +
    "expand: true adds words the best pages share to the query (more recall for questions in other words than the pages'). " +
    "A misspelt word no page holds is corrected when the correction finds more, and the answer says so.",
  annotations: readOnly("Web search", true),
  inputSchema: jsonSchemaOf(WebSearchArguments),
  outputSchema: jsonSchemaOf(WebSearchOutput),
  decode: decoderFor(WebSearchArguments, ARGUMENTS, { compiled: true }),
  call: ({ query, ...options }: typeof WebSearchArguments.Type, context) => {
    const issue = contentOptionsIssue(options, "web")
    if (issue !== undefined) return Effect.fail(invalid(ARGUMENTS, issue.path, issue.rule))
    return Effect.andThen(
      context.progress(options.content === undefined || options.content === "snippet" ? "searching" : "searching and reading"),
      search.web(toSearchQuery({ keywords: query, ...options })).pipe(
        Effect.map(({ data, extra }): ToolOutcome => {
          const corrections = correctionsIn(extra)
          return data.organic.length === 0
            ? failed(`No results for "${data.query}". Try fewer or other words, or a wider freshness.`)
            : {
              text: webResultsText(data.query, data.organic, corrections),
              structured: {
                query: data.query,
                ...(corrections === undefined ? {} : { corrections }),
                results: data.organic.map((r) => ({
                  position: r.position,
                  title: r.title,
                  url: r.link,
                  snippet: r.snippet,
                  date: r.date,
                  ...(r.content === undefined ? {} : { content: r.content })
                }))
              },
              isError: false
            }
        }),
        Effect.catchTags({
          SearchBackendError: (error) => Effect.succeed(searchFailure(error)),
          SourceSelectionError: (error) => Effect.fail(sourceSelection(error))
        })
      )
    )
  }
})

// ---------------------------------------------------------------------------
// image_search

const ImageSearchArguments = Schema.Struct({
  query: SearchBody.fields.keywords.annotate({ description: "What the images should show." }),
  num: SearchBody.fields.num
})

const ImageSearchOutput = Schema.Struct({
  query: Schema.String,
  images: Schema.Array(Schema.Struct({
    imageUrl: Schema.String,
    pageUrl: Schema.String,
    title: Schema.String,
    width: Schema.optionalKey(Schema.Int),
    height: Schema.optionalKey(Schema.Int)
  }))
})

const imagesText = (query: string, images: ReadonlyArray<ImageResult>) =>
  [
    `Images for "${query}":`,
    ...images.map((image, i) =>
      `\n[${i + 1}] ${image.title === "" ? "(untitled)" : image.title}\nImage: ${image.url}\nPage: ${image.refUrl}${
        image.width !== undefined && image.height !== undefined ? `\nSize: ${image.width}x${image.height}` : ""
      }`
    )
  ].join("\n")

const imageSearch = (search: FederatedSearch["Service"]): McpToolSpec<never> => ({
  name: "image_search",
  description: "Search for images: each with the image's URL, the page it appears on, its title and, when known, its size in pixels.",
  annotations: readOnly("Image search", true),
  inputSchema: jsonSchemaOf(ImageSearchArguments),
  outputSchema: jsonSchemaOf(ImageSearchOutput),
  decode: decoderFor(ImageSearchArguments, ARGUMENTS, { compiled: true }),
  call: ({ query, num }: typeof ImageSearchArguments.Type, context) =>
    Effect.andThen(
      context.progress("searching"),
      search.images(toSearchQuery({ keywords: query, ...(num === undefined ? {} : { num }) })).pipe(
        Effect.map(({ data }): ToolOutcome => {
          const keywords = query.trim()
          if (data.length === 0) return failed(`No images for "${keywords}". Try fewer or other words.`)
          return {
            text: imagesText(keywords, data),
            structured: {
              query: keywords,
              images: data.map((image) => ({
                imageUrl: image.url,
                pageUrl: image.refUrl,
                title: image.title,
                ...(image.width === undefined ? {} : { width: image.width }),
                ...(image.height === undefined ? {} : { height: image.height })
              }))
            },
            isError: false
          }
        }),
        Effect.catchTags({
          SearchBackendError: (error) => Effect.succeed(searchFailure(error)),
          SourceSelectionError: (error) => Effect.fail(sourceSelection(error))
        })
      )
    )
})

// ---------------------------------------------------------------------------
// web_fetch

const WebFetchArguments = Schema.Struct({
  url: fetchUrl("The page to read: an absolute http(s) URL."),
  format: FetchRequestBody.fields.format,
  maxChars: FetchRequestBody.fields.maxChars,
  maxTokens: FetchRequestBody.fields.maxTokens,
  query: FetchRequestBody.fields.query.annotate({
    description: "What you want from the page: its passages most relevant to it are given (with the headings they sit under), not the whole page."
  })
})

const WebFetchOutput = Schema.Struct({
  url: Schema.String,
  title: Schema.String,
  date: Schema.NullOr(Schema.String),
  contentType: Schema.String,
  content: Schema.String,
  chunks: Schema.optionalKey(Schema.Array(Schema.Struct({ heading: Schema.String, text: Schema.String })))
})

/** What the model should do about each way a page can fail. */
const fetchFailure = (error: WebFetchError): ToolOutcome => {
  switch (error.reason) {
    case "refused":
      return failed(`This address may not be fetched: ${error.message}. Use a public http(s) URL.`)
    case "timeout":
      return failed(`The site did not answer in time: ${error.message}. Try again later or another page.`)
    case "http_status":
      return failed(`The site answered with an error: ${error.message}. Check the URL, or try another page.`)
    case "too_large":
      return failed(`The page is too large to read: ${error.message}. Try another page.`)
    case "unsupported_type":
      return failed(`The page's content cannot be read: ${error.message}.`)
    default:
      return failed(`The page could not be fetched: ${error.message}.`)
  }
}

/** A page read for a query, as text: each chunk under its heading path. */
const chunksText = (chunks: ReadonlyArray<{ readonly heading: string; readonly text: string }>) =>
  chunks.map((chunk) => `${chunk.heading === "" ? "" : `## ${chunk.heading}\n`}${chunk.text}`).join("\n\n")

// One page a call: a model reads several by calling the tool for each, each call one request against the key's limit.
const webFetch = (fetcher: WebFetch["Service"]): McpToolSpec<never> => ({
  name: "web_fetch",
  description: "Read one web page: its main content as Markdown (or plain text or HTML), without navigation and boilerplate, " +
    "with its title, final URL and date. Use it on a URL from web_search, or one the user gave, to read more than a snippet. " +
    "With query, only the page's passages most relevant to it, each under its headings.",
  annotations: readOnly("Read a web page", true),
  inputSchema: jsonSchemaOf(WebFetchArguments),
  outputSchema: jsonSchemaOf(WebFetchOutput),
  decode: decoderFor(WebFetchArguments, ARGUMENTS, { compiled: true }),
  call: (args: typeof WebFetchArguments.Type, context) => {
    if (args.query !== undefined && args.format === "html") {
      return Effect.fail(invalid(ARGUMENTS, "format", "must be markdown or text with query (chunks are not given as HTML)"))
    }
    return Effect.andThen(
      context.progress("fetching"),
      fetcher.fetch({
        url: args.url,
        format: args.format ?? "markdown",
        ...(args.maxChars === undefined ? {} : { maxChars: args.maxChars }),
        ...(args.maxTokens === undefined ? {} : { maxTokens: args.maxTokens }),
        ...(args.query === undefined ? {} : { query: args.query })
      }).pipe(
        Effect.map((page): ToolOutcome => ({
          text: `# ${page.title === "" ? page.url : page.title}\nURL: ${page.url}${page.date === null ? "" : `\nDate: ${page.date}`}\n\n${
            page.chunks === undefined ? page.content : chunksText(page.chunks)
          }`,
          structured: {
            url: page.url,
            title: page.title,
            date: page.date,
            contentType: page.contentType,
            content: page.content,
            ...(page.chunks === undefined ? {} : { chunks: page.chunks })
          },
          isError: false
        })),
        Effect.catchTag("WebFetchError", (error) =>
          error.reason === "invalid_url" ? Effect.fail(invalid(ARGUMENTS, "url", error.message)) : Effect.succeed(fetchFailure(error)))
      )
    )
  }
})

// ---------------------------------------------------------------------------
// map_site

const MapSiteArguments = Schema.Struct({
  url: fetchUrl("A page of the site, usually its home page: an absolute http(s) URL."),
  limit: MapRequestBody.fields.limit.annotate({ description: "URLs at most (the server keeps its own bound)." })
})

const MapSiteOutput = Schema.Struct({
  url: Schema.String,
  urls: Schema.Array(Schema.String),
  truncated: Schema.NullOr(Schema.Literals(["limit", "time"]))
})

const mapSite = (fetcher: WebFetch["Service"]): McpToolSpec<never> => ({
  name: "map_site",
  description: "List the pages of a website: the URLs its sitemaps give, then the links of the page given, only on that page's host " +
    "and only where the site's robots.txt allows. Use it to find the right page of a documentation site or blog before reading it with web_fetch.",
  annotations: readOnly("List a site's pages", true),
  inputSchema: jsonSchemaOf(MapSiteArguments),
  outputSchema: jsonSchemaOf(MapSiteOutput),
  decode: decoderFor(MapSiteArguments, ARGUMENTS, { compiled: true }),
  call: (args: typeof MapSiteArguments.Type, context) =>
    Effect.andThen(
      context.progress("mapping"),
      fetcher.mapSite({ url: args.url, limit: args.limit }).pipe(
        Effect.map((map): ToolOutcome => ({
          text: `${map.urls.length} URLs of ${map.url}${
            map.truncated === null ? "" : map.truncated === "limit" ? " (the limit was reached: there may be more)" : " (the time ran out: there may be more)"
          }:\n${map.urls.join("\n")}`,
          structured: { url: map.url, urls: map.urls, truncated: map.truncated },
          isError: false
        })),
        Effect.catchTag("WebFetchError", (error) =>
          error.reason === "invalid_url" ? Effect.fail(invalid(ARGUMENTS, "url", error.message)) : Effect.succeed(fetchFailure(error)))
      )
    )
})

// ---------------------------------------------------------------------------
// answer

const questionRule = "must be a non-empty question of at most 4000 characters"
const AnswerArguments = Schema.Struct({
  question: Schema.String.annotate({ message: questionRule, description: `The question to answer from the web, in natural language; ${questionRule}.` }).check(
    Schema.makeFilter((s: string) => s.trim().length >= 1 && s.length <= 4000 ? undefined : questionRule, { toJsonSchema: () => ({ minLength: 1, maxLength: 4000 }) })
  )
})

const AnswerOutput = Schema.Struct({
  answer: Schema.String,
  model: Schema.String,
  sources: Schema.Array(Schema.Struct({ number: Schema.Int, title: Schema.String, url: Schema.String, date: Schema.NullOr(Schema.String) })),
  citations: Schema.Array(Schema.Struct({ url: Schema.String, title: Schema.String, startIndex: Schema.Int, endIndex: Schema.Int }))
})

const answer = (chat: ChatGateway["Service"]): McpToolSpec<never> => ({
  name: "answer",
  description: "Answer a question from the web in a few sentences, with numbered sources and citations that point only at pages " +
    "retrieved for it (grounded chat with the server's default model). Use it for a direct, cited answer; use web_search for a list of pages.",
  annotations: readOnly("Answer with sources", true),
  inputSchema: jsonSchemaOf(AnswerArguments),
  outputSchema: jsonSchemaOf(AnswerOutput),
  decode: decoderFor(AnswerArguments, ARGUMENTS, { compiled: true }),
  call: ({ question }: typeof AnswerArguments.Type, context) => {
    const body: ChatCompletionRequest = { messages: [{ role: "user", content: question.trim() }], web_search_options: {} }
    return Effect.andThen(
      context.progress("searching and answering"),
      chat.complete(toChatRequest(body, chat.defaultModel)).pipe(
        Effect.map((result): ToolOutcome => {
          const message = result.choices[0]?.message
          const text = typeof message?.content === "string" ? message.content : ""
          const sources = (result.search_results ?? []).map((s, i) => ({ number: i + 1, title: s.title, url: s.url, date: s.date ?? null }))
          const citations = (message?.annotations ?? []).map((a) => ({
            url: a.url_citation.url,
            title: a.url_citation.title,
            startIndex: a.url_citation.start_index,
            endIndex: a.url_citation.end_index
          }))
          const listed = sources.length === 0 ? "" : `\n\nSources:\n${sources.map((s) => `[${s.number}] ${s.title} - ${s.url}`).join("\n")}`
          return { text: `${text}${listed}`, structured: { answer: text, model: result.model, sources, citations }, isError: false }
        }),
        Effect.catchTag("ChatModelError", (error) =>
          Effect.succeed(failed(`No answer could be made: ${error.message}. Try again later, or use web_search.`)))
      )
    )
  }
})

/**
 * The tools over the application's services; `answer` only where a chat model can answer.
 * Built once per server: the listing and the decoders are made here, not per request.
 */
export const makeMcpTools = Effect.gen(function*() {
  const search = yield* FederatedSearch
  const fetcher = yield* WebFetch
  const chat = yield* ChatGateway
  const hasModel = (yield* chat.models).length > 0
  const tools: Array<McpToolSpec<never>> = [webSearch(search), imageSearch(search), webFetch(fetcher), mapSite(fetcher)]
  if (hasModel) tools.push(answer(chat))
  return tools
})
