// @ts-check
/**
 * The playground's MCP panel: the endpoint, the `mcpServers` entry an agent
 * host takes (the key masked until asked for), the tools POST /mcp lists for
 * the saved key, and a web_search call to try.
 */
import { byId, el, setStatus } from "./dom.js"
import { apiKey } from "./key.js"
import { curlOf, elapsed, needKey, numberOf, showCode } from "./panel.js"
import { errorMessage, messageOf, readJson, request } from "./request.js"
import { fieldsNode } from "./schema.js"

/** @typedef {import("./schema.js").Schema} Schema */
/**
 * A tool as tools/list answers it.
 * @typedef {{
 *   name: string; title?: string; description?: string; inputSchema?: Schema;
 *   annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean }
 * }} Tool
 */
/**
 * A JSON-RPC response (or a refused request's error body).
 * @typedef {{ result?: unknown; error?: { code?: number; message?: string } }} RpcBody
 */
/**
 * A tools/call result.
 * @typedef {{ content?: Array<{ type?: string; text?: string }>; isError?: boolean }} CallResult
 */

const PATH = "/mcp"
// Streamable HTTP asks clients to accept both; this server answers JSON unless progress was asked for.
const HEADERS = { Accept: "application/json, text/event-stream" }
const MASK = "••••••••••••"
const PLACEHOLDER = "<your Periscope key>"

let revealed = false
let nextId = 1

const endpoint = () => location.origin + PATH

/**
 * The HTTP `mcpServers` entry with the key as given.
 * @param {string} key
 */
const httpConfig = (key) =>
  JSON.stringify({ mcpServers: { periscope: { type: "http", url: endpoint(), headers: { Authorization: `Bearer ${key}` } } } }, null, 2)

/** Shows the entry with the saved key masked, or revealed when asked for. */
const showConfig = () => {
  const key = apiKey()
  byId("mcp-http-config").textContent = httpConfig(key === "" ? PLACEHOLDER : revealed ? key : MASK)
}

/**
 * Why /mcp refused this page's Origin (403), and what lets it in.
 * @param {string} detail the server's message
 */
const originRefused = (detail) =>
  `Error 403: ${detail}. This page is open at ${location.origin}, a name rather than the server's loopback or IP address, ` +
  `so /mcp refuses it as a browser origin (a guard against DNS rebinding). To use this panel here, add "${location.origin}" ` +
  "to mcp.allowedOrigins in the config file. Agent hosts send no Origin and are not affected."

/**
 * Sends one JSON-RPC request to /mcp with the saved key: its result, or a message saying why there is none.
 * @param {string} method
 * @param {Record<string, unknown>} [params]
 * @returns {Promise<{ ok: true; result: unknown; body: unknown } | { ok: false; message: string }>}
 */
const rpc = async (method, params) => {
  const message = { jsonrpc: "2.0", id: nextId++, method, ...(params === undefined ? {} : { params }) }
  const response = await request("POST", PATH, message, undefined, HEADERS)
  const body = /** @type {RpcBody | null} */ (await readJson(response))
  if (response.status === 403) return { ok: false, message: originRefused(body?.error?.message ?? "Origin refused") }
  if (!response.ok || body === null || typeof body !== "object") return { ok: false, message: errorMessage(response.status, body) }
  if (body.error) return { ok: false, message: `Error ${body.error.code}: ${body.error.message}` }
  return { ok: true, result: body.result, body }
}

/**
 * The hints a client shows as badges.
 * @param {Tool["annotations"]} annotations
 */
const badges = (annotations) => {
  const hints = annotations ?? {}
  const names = []
  if (hints.readOnlyHint) names.push("read-only")
  if (hints.destructiveHint) names.push("destructive")
  if (hints.openWorldHint) names.push("open-world")
  if (names.length === 0) return null
  return el("ul", { className: "badges", "aria-label": "Annotations" }, names.map((name) => el("li", { className: "badge", text: name })))
}

/** @param {Tool} tool */
const toolItem = (tool) => {
  const schema = tool.inputSchema ?? {}
  const properties = schema.properties ?? {}
  const required = Array.isArray(schema.required) ? schema.required : []
  const names = Object.keys(properties).map((name) => (required.includes(name) ? `${name} (required)` : name))
  const parameters = el("details", null, [
    el("summary", { text: names.length === 0 ? "No parameters" : `Parameters: ${names.join(", ")}` }),
    el("div", { className: "schema" }, [fieldsNode(properties, required, 0)])
  ])
  return el("li", { className: "tool" }, [
    el("h4", null, [el("code", { text: tool.name }), tool.title ? ` ${tool.title}` : null]),
    badges(tool.annotations),
    tool.description ? el("p", { text: tool.description }) : null,
    parameters
  ])
}

/** Shows the entry for the saved key and lists the tools /mcp answers with it. */
export const loadMcp = async () => {
  showConfig()
  const list = byId("mcp-tools")
  list.replaceChildren()
  if (apiKey() === "") {
    setStatus("mcp-status", "Enter an API key above to list the tools.", true)
    return
  }
  list.setAttribute("aria-busy", "true")
  setStatus("mcp-status", "Listing tools…")
  try {
    const answer = await rpc("tools/list")
    if (!answer.ok) {
      setStatus("mcp-status", answer.message, true)
      return
    }
    const tools = /** @type {{ tools?: Array<Tool> } | null} */ (answer.result)?.tools
    if (!Array.isArray(tools)) {
      setStatus("mcp-status", "tools/list answered without a tool list.", true)
      return
    }
    for (const tool of tools) list.appendChild(toolItem(tool))
    setStatus("mcp-status", `${tools.length}${tools.length === 1 ? " tool" : " tools"} for this key.`)
  } catch (error) {
    setStatus("mcp-status", `Request failed: ${messageOf(error)}`, true)
  } finally {
    list.removeAttribute("aria-busy")
  }
}

/** @param {SubmitEvent} event */
const tryWebSearch = async (event) => {
  event.preventDefault()
  if (needKey("mcp-try-status")) return
  const num = numberOf(byId("mcp-try-num", HTMLInputElement))
  const params = { name: "web_search", arguments: { query: byId("mcp-try-query", HTMLInputElement).value, ...(num === undefined ? {} : { num }) } }
  showCode("mcp-try-curl", curlOf("POST", PATH, { jsonrpc: "2.0", id: 1, method: "tools/call", params }, false, HEADERS))
  const output = byId("mcp-try-result")
  output.hidden = true
  byId("mcp-try-json").hidden = true
  setStatus("mcp-try-status", "Calling web_search…")
  const started = performance.now()
  try {
    const answer = await rpc("tools/call", params)
    if (!answer.ok) {
      setStatus("mcp-try-status", answer.message, true)
      return
    }
    const result = /** @type {CallResult | null} */ (answer.result)
    const text = (result?.content ?? []).filter((part) => part.type === "text").map((part) => part.text ?? "").join("\n\n")
    output.textContent = text
    output.classList.toggle("error", result?.isError === true)
    output.hidden = false
    showCode("mcp-try-json", JSON.stringify(answer.body, null, 2))
    setStatus(
      "mcp-try-status",
      result?.isError === true ? `web_search answered with an error the model would read (isError), in ${elapsed(started)}.` : `web_search answered in ${elapsed(started)}.`,
      result?.isError === true
    )
  } catch (error) {
    setStatus("mcp-try-status", `Request failed: ${messageOf(error)}`, true)
  }
}

/** Copies the HTTP entry with the real key; where the clipboard is refused, shows it selected to copy by hand. */
const copyConfig = async () => {
  const key = apiKey()
  const text = httpConfig(key === "" ? PLACEHOLDER : key)
  try {
    await navigator.clipboard.writeText(text)
    setStatus("mcp-copy-status", key === "" ? `Copied: put your key in place of ${PLACEHOLDER}.` : "Copied, with your key.")
  } catch {
    setReveal(true)
    const selection = getSelection()
    if (selection !== null) selection.selectAllChildren(byId("mcp-http-config"))
    setStatus("mcp-copy-status", "This browser refused the clipboard: the entry is selected, copy it with Ctrl+C.", true)
  }
}

/** @param {boolean} on */
const setReveal = (on) => {
  revealed = on
  byId("mcp-reveal").setAttribute("aria-pressed", on ? "true" : "false")
  showConfig()
}

/** Wires the panel: endpoint, Show key, Copy, Reload and the web_search form. */
export const initMcp = () => {
  byId("mcp-endpoint").textContent = endpoint()
  showConfig()
  byId("mcp-reveal", HTMLButtonElement).addEventListener("click", () => setReveal(!revealed))
  byId("mcp-copy", HTMLButtonElement).addEventListener("click", () => void copyConfig())
  byId("mcp-reload", HTMLButtonElement).addEventListener("click", () => void loadMcp())
  byId("mcp-try-form", HTMLFormElement).addEventListener("submit", tryWebSearch)
}
