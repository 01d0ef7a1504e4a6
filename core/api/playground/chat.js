// @ts-check
/**
 * The playground's chat panel: a model picker from /v1/models, and a streamed
 * POST /v1/chat/completions shown as it arrives (reasoning, content, tool
 * calls, the sources a grounded answer cites), keeping the conversation.
 */
import { byId, el, link, safeUrl, setStatus } from "./dom.js"
import { apiKey } from "./key.js"
import { curlOf, elapsed, needKey, numberOf, showCode } from "./panel.js"
import { errorMessage, messageOf, readJson, request } from "./request.js"

/** @typedef {{ role: "system" | "user" | "assistant"; content: string }} Message */
/** @typedef {{ type?: string; url_citation?: { url?: string; title?: string } } | null} Annotation */
/** @typedef {{ url?: string; link?: string; title?: string; date?: string; snippet?: string } | null} SearchResultRef */
/**
 * Where a grounded answer names its sources: a chunk, or a choice's delta or message.
 * @typedef {{ annotations?: Array<Annotation>; search_results?: Array<SearchResultRef>; citations?: Array<unknown> }} CitationHolder
 */
/** @typedef {{ index?: number; id?: string; function?: { name?: string; arguments?: string } }} ToolCallDelta */
/** @typedef {CitationHolder & { reasoning_content?: unknown; content?: unknown; tool_calls?: Array<ToolCallDelta> }} Delta */
/** @typedef {{ index: number; delta?: Delta; message?: Delta; finish_reason?: string | null }} Choice */
/** @typedef {{ prompt_tokens: number; completion_tokens: number }} Usage */
/** @typedef {CitationHolder & { model?: unknown; choices?: Array<Choice>; usage?: Usage; error?: { message?: string } }} Chunk */

/** @type {Array<Message>} The conversation so far: each whole exchange, sent again with the next message. */
let conversation = []
/** @type {AbortController | null} The request streaming now, for Stop. */
let running = null

/** Fills the model picker from /v1/models (keeping the chosen model when it is still there). */
export const loadModels = async () => {
  const select = byId("chat-model", HTMLSelectElement)
  if (apiKey() === "") {
    select.replaceChildren(el("option", { value: "", text: "(enter a key to list models)" }))
    return
  }
  try {
    const response = await request("GET", "/v1/models")
    const json = /** @type {{ data?: Array<{ id: string }> } | null} */ (await readJson(response))
    if (!response.ok || !json || !Array.isArray(json.data)) {
      setStatus("chat-status", `Models: ${errorMessage(response.status, json)}`, true)
      return
    }
    const previous = select.value
    select.replaceChildren()
    for (const model of json.data) select.appendChild(el("option", { value: model.id, text: model.id }))
    if (previous && json.data.some((m) => m.id === previous)) select.value = previous
    setStatus("chat-status", `${json.data.length} models available.`)
  } catch (error) {
    setStatus("chat-status", `Models: request failed: ${messageOf(error)}`, true)
  }
}

/** @param {string} text */
const heading = (text) => el("h4", { text })

/**
 * Text with its http(s) URLs as links, as nodes.
 * @param {string} text
 */
const linkified = (text) => {
  const out = document.createDocumentFragment()
  const pattern = /https?:\/\/[^\s<>"')\]]+/g
  let last = 0
  let match
  while ((match = pattern.exec(text)) !== null) {
    const url = match[0].replace(/[.,;:!?]+$/, "")
    if (match.index > last) out.appendChild(document.createTextNode(text.slice(last, match.index)))
    out.appendChild(link(url, url))
    last = match.index + url.length
    pattern.lastIndex = last
  }
  if (last < text.length) out.appendChild(document.createTextNode(text.slice(last)))
  return out
}

/**
 * One assistant answer, filled as chunks arrive.
 * @param {string} model
 */
const assistantTurn = (model) => {
  const reasoningText = document.createTextNode("")
  const contentText = document.createTextNode("")
  const reasoning = el("details", { open: "" }, [el("summary", { text: "Reasoning" }), el("p", { className: "reasoning" }, [reasoningText])])
  reasoning.hidden = true
  const content = el("p", { className: "content" }, [contentText])
  const tools = el("div")
  const citations = el("div")
  const meta = el("p", { className: "meta" })
  const title = el("h3", { text: `Assistant · ${model}` })
  const root = el("article", { className: "turn assistant", "aria-label": "Assistant answer" }, [title, reasoning, content, tools, citations, meta])
  /** @type {Array<{ id: string; name: string; arguments: string }>} */
  const calls = []
  /** @type {Array<{ url: string; title: string; date: string | undefined; snippet: string | undefined }>} */
  const sources = []
  /** @type {Set<string>} */
  const seen = new Set()
  /** @type {{ content: string; finish: string | null; usage: Usage | null; model: string }} */
  const state = { content: "", finish: null, usage: null, model }

  const renderTools = () => {
    tools.replaceChildren()
    if (calls.length === 0) return
    const list = el("ul")
    for (const call of calls) {
      if (!call) continue
      let args = call.arguments
      try {
        args = JSON.stringify(JSON.parse(args), null, 2)
      } catch {
        // partial or invalid JSON: shown as sent
      }
      list.appendChild(el("li", null, [el("code", { text: call.name || "(unnamed)" }), el("pre", { text: args })]))
    }
    tools.appendChild(heading("Tool calls"))
    tools.appendChild(list)
  }

  /**
   * @param {unknown} url
   * @param {string | undefined} title
   * @param {string} [date]
   * @param {string} [snippet]
   */
  const addSource = (url, title, date, snippet) => {
    const href = safeUrl(url)
    if (href === null || seen.has(href)) return
    seen.add(href)
    sources.push({ url: href, title: title || href, date, snippet })
    citations.replaceChildren(heading("Sources"))
    const list = el("ol")
    for (const source of sources) {
      const item = el("li", null, [link(source.title, source.url)])
      if (source.date) item.appendChild(el("span", { className: "meta", text: ` · ${source.date}` }))
      if (source.snippet) item.appendChild(el("div", { className: "meta", text: source.snippet }))
      list.appendChild(item)
    }
    citations.appendChild(list)
  }

  /** @param {CitationHolder | undefined} holder */
  const addCitations = (holder) => {
    if (!holder) return
    if (Array.isArray(holder.annotations)) {
      for (const a of holder.annotations) {
        if (a && a.type === "url_citation" && a.url_citation) addSource(a.url_citation.url, a.url_citation.title)
      }
    }
    if (Array.isArray(holder.search_results)) {
      for (const r of holder.search_results) if (r) addSource(r.url || r.link, r.title, r.date, r.snippet)
    }
    if (Array.isArray(holder.citations)) {
      for (const url of holder.citations) if (typeof url === "string") addSource(url, url)
    }
  }

  /** @param {Chunk} data */
  const chunk = (data) => {
    if (typeof data.model === "string" && data.model !== state.model) {
      state.model = data.model
      title.textContent = `Assistant · ${data.model}`
    }
    addCitations(data)
    for (const choice of data.choices || []) {
      if (choice.index !== 0) continue
      const delta = choice.delta || choice.message || {}
      if (typeof delta.reasoning_content === "string" && delta.reasoning_content !== "") {
        reasoning.hidden = false
        reasoningText.appendData(delta.reasoning_content)
      }
      if (typeof delta.content === "string") {
        state.content += delta.content
        contentText.appendData(delta.content)
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const tc of delta.tool_calls) {
          const at = typeof tc.index === "number" ? tc.index : calls.length
          const call = calls[at] || (calls[at] = { id: "", name: "", arguments: "" })
          if (tc.id) call.id = tc.id
          if (tc.function && tc.function.name) call.name += tc.function.name
          if (tc.function && tc.function.arguments) call.arguments += tc.function.arguments
        }
        renderTools()
      }
      addCitations(delta)
      if (choice.finish_reason) state.finish = choice.finish_reason
    }
    if (data.usage) state.usage = data.usage
  }

  /** @param {string} text */
  const fail = (text) => {
    root.appendChild(el("p", { className: "error", role: "alert", text }))
  }

  /** @param {string} summary */
  const finish = (summary) => {
    if (state.content !== "") content.replaceChildren(linkified(state.content))
    else if (calls.length > 0 || state.finish === null) content.hidden = true
    const parts = []
    if (state.finish) parts.push(`finish: ${state.finish}`)
    if (state.usage) parts.push(`${state.usage.prompt_tokens} prompt + ${state.usage.completion_tokens} completion tokens`)
    parts.push(summary)
    meta.textContent = parts.join(" · ")
  }

  return { root, chunk, fail, finish, state }
}

/**
 * Reads an SSE body: calls onData with each event's data; true when it ended with [DONE].
 * @param {ReadableStream<Uint8Array>} body
 * @param {(data: string) => void} onData
 */
const readEvents = async (body, onData) => {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  for (;;) {
    const part = await reader.read()
    if (part.done) break
    buffer += decoder.decode(part.value, { stream: true })
    const events = buffer.split(/\r?\n\r?\n/)
    buffer = events.pop() ?? ""
    for (const event of events) {
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n")
      if (data === "") continue
      if (data === "[DONE]") return true
      onData(data)
    }
  }
  return false
}

/** The tools field as an array, or undefined when it is empty; throws on bad JSON. */
const parseTools = () => {
  const text = byId("chat-tools", HTMLTextAreaElement).value.trim()
  if (text === "") return undefined
  const tools = JSON.parse(text)
  if (!Array.isArray(tools)) throw new Error("tools: must be a JSON array")
  return tools
}

/**
 * A chat function tool ({type, function: {name, parameters}}) in the Responses API's flat shape
 * ({type, name, parameters}); anything else as given.
 * @param {unknown} tool
 * @returns {unknown}
 */
const responsesTool = (tool) => {
  if (tool === null || typeof tool !== "object") return tool
  const { function: fn, ...rest } = /** @type {{ function?: unknown }} */ (tool)
  return fn !== null && typeof fn === "object" ? { ...rest, ...fn } : tool
}

/**
 * The same request as OpenAI's Responses API takes it (POST /v1/responses): the system message
 * as instructions, the turns as input (a lone first message as its text), max_tokens as
 * max_output_tokens, the function tools flattened, and web search as the web_search tool.
 * @param {{ model: string; system: string; turns: Array<Message>; temperature: number | undefined; maxTokens: number | undefined; tools: Array<unknown> | undefined; webSearch: string }} chat
 */
const responsesBodyOf = (chat) => {
  /** @type {Record<string, unknown>} */
  const body = { model: chat.model || undefined }
  if (chat.system) body.instructions = chat.system
  body.input = chat.turns.length === 1 ? chat.turns[0].content : chat.turns
  body.stream = true
  if (chat.temperature !== undefined) body.temperature = chat.temperature
  if (chat.maxTokens !== undefined) body.max_output_tokens = chat.maxTokens
  const tools = (chat.tools ?? []).map(responsesTool)
  if (chat.webSearch) tools.push({ type: "web_search", search_context_size: chat.webSearch })
  if (tools.length > 0) body.tools = tools
  return body
}

/** @param {SubmitEvent} event */
const send = async (event) => {
  event.preventDefault()
  if (running !== null) return
  if (needKey("chat-status")) return
  const input = byId("chat-input", HTMLTextAreaElement)
  const text = input.value.trim()
  if (text === "") {
    setStatus("chat-status", "Write a message first.", true)
    input.focus()
    return
  }
  let tools
  try {
    tools = parseTools()
  } catch (error) {
    setStatus("chat-status", `Tools: not valid JSON: ${messageOf(error)}`, true)
    byId("chat-tools").focus()
    return
  }
  const model = byId("chat-model", HTMLSelectElement).value
  /** @type {Array<Message>} */
  const messages = []
  const system = byId("chat-system", HTMLTextAreaElement).value.trim()
  if (system) messages.push({ role: "system", content: system })
  /** @type {Message} */
  const user = { role: "user", content: text }
  /** @type {Record<string, unknown>} */
  const body = { model: model || undefined, messages: [...messages, ...conversation, user], stream: true }
  const temperature = numberOf(byId("chat-temperature", HTMLInputElement))
  if (temperature !== undefined) body.temperature = temperature
  const maxTokens = numberOf(byId("chat-max-tokens", HTMLInputElement))
  if (maxTokens !== undefined) body.max_tokens = maxTokens
  if (tools !== undefined) body.tools = tools
  const webSearch = byId("chat-web-search", HTMLSelectElement).value
  if (webSearch) body.web_search_options = { search_context_size: webSearch }
  showCode("chat-curl", curlOf("POST", "/v1/chat/completions", body, true))
  const turns = [...conversation, user]
  showCode("chat-responses-curl", curlOf("POST", "/v1/responses", responsesBodyOf({ model, system, turns, temperature, maxTokens, tools, webSearch }), true))

  const transcript = byId("chat-transcript")
  transcript.appendChild(el("article", { className: "turn user", "aria-label": "Your message" }, [
    el("h3", { text: "You" }),
    el("p", { className: "content", text })
  ]))
  const turn = assistantTurn(model || "default model")
  transcript.appendChild(turn.root)
  transcript.setAttribute("aria-busy", "true")
  input.value = ""
  const controller = new AbortController()
  running = controller
  byId("chat-send", HTMLButtonElement).disabled = true
  byId("chat-stop", HTMLButtonElement).disabled = false
  setStatus("chat-status", "Streaming…")
  const started = performance.now()
  try {
    const response = await request("POST", "/v1/chat/completions", body, controller.signal)
    if (!response.ok || response.body === null) {
      turn.fail(errorMessage(response.status, await readJson(response)))
      turn.finish(elapsed(started))
      setStatus("chat-status", "The request was refused.", true)
      input.value = text
      return
    }
    let failed = false
    const done = await readEvents(response.body, (data) => {
      /** @type {Chunk} */
      let parsed
      try {
        parsed = JSON.parse(data)
      } catch {
        return
      }
      if (parsed && parsed.error) {
        failed = true
        turn.fail(`Stream failed: ${parsed.error.message || "unknown error"}`)
        return
      }
      turn.chunk(parsed)
    })
    if (!done && !failed) {
      failed = true
      turn.fail("The stream ended without data: [DONE]: the answer may be cut.")
    }
    turn.finish(elapsed(started))
    // A broken-off answer stays out of the conversation: the next request starts from the last whole one.
    if (!failed) {
      conversation.push(user)
      if (turn.state.content !== "") conversation.push({ role: "assistant", content: turn.state.content })
    }
    setStatus("chat-status", failed ? "The answer failed mid-stream." : "Answer complete.", failed)
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") {
      turn.finish(`stopped after ${elapsed(started)}`)
      setStatus("chat-status", "Stopped.")
    } else {
      turn.fail(`Request failed: ${messageOf(error)}`)
      setStatus("chat-status", "Request failed.", true)
    }
  } finally {
    running = null
    transcript.removeAttribute("aria-busy")
    byId("chat-send", HTMLButtonElement).disabled = false
    byId("chat-stop", HTMLButtonElement).disabled = true
  }
}

/** Wires the chat form, Ctrl+Enter, Stop and New conversation. */
export const initChat = () => {
  const form = byId("chat-form", HTMLFormElement)
  const input = byId("chat-input", HTMLTextAreaElement)
  form.addEventListener("submit", send)
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault()
      form.requestSubmit()
    }
  })
  byId("chat-stop", HTMLButtonElement).addEventListener("click", () => {
    if (running !== null) running.abort()
    input.focus()
  })
  byId("chat-clear", HTMLButtonElement).addEventListener("click", () => {
    if (running !== null) running.abort()
    conversation = []
    byId("chat-transcript").replaceChildren()
    setStatus("chat-status", "New conversation.")
    input.focus()
  })
}
