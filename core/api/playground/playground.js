// @ts-check
/**
 * The playground at `/`: tabs, web search and image search (chat is in
 * chat.js, MCP in mcp.js). A panel is a tab `tab-<name>` with its section
 * `panel-<name>` in index.html and a module that wires its form.
 */
import { initChat, loadModels } from "./chat.js"
import { byId, el, link, safeUrl, setStatus } from "./dom.js"
import { initKeyForm } from "./key.js"
import { initMcp, loadMcp } from "./mcp.js"
import { curlOf, elapsed, needKey, numberOf, showCode } from "./panel.js"
import { errorMessage, messageOf, readJson, request } from "./request.js"

// --- tabs --------------------------------------------------------------------

const tabs = Array.from(document.querySelectorAll('[role="tab"]'), (tab) => tab.id.slice("tab-".length))

/**
 * Shows one panel, hides the others and keeps its name in the URL's hash.
 * @param {string} name
 * @param {boolean} focus
 */
const selectTab = (name, focus) => {
  for (const other of tabs) {
    const tab = byId(`tab-${other}`)
    const selected = other === name
    tab.setAttribute("aria-selected", selected ? "true" : "false")
    tab.tabIndex = selected ? 0 : -1
    byId(`panel-${other}`).hidden = !selected
  }
  if (focus) byId(`tab-${name}`).focus()
  if (location.hash !== `#${name}`) history.replaceState(null, "", `#${name}`)
}

tabs.forEach((name, index) => {
  const tab = byId(`tab-${name}`)
  tab.addEventListener("click", () => selectTab(name, false))
  tab.addEventListener("keydown", (event) => {
    let next = null
    if (event.key === "ArrowRight") next = tabs[(index + 1) % tabs.length]
    else if (event.key === "ArrowLeft") next = tabs[(index + tabs.length - 1) % tabs.length]
    else if (event.key === "Home") next = tabs[0]
    else if (event.key === "End") next = tabs[tabs.length - 1]
    if (next !== null) {
      event.preventDefault()
      selectTab(next, true)
    }
  })
})

// --- web search --------------------------------------------------------------

/**
 * One organic result as POST /api/search/webSearch returns it.
 * @typedef {{ position: number; title?: string; link: string; snippet: string; date?: string | null }} WebResult
 */

/** @param {WebResult} result */
const webResult = (result) => {
  const title = result.title || result.link
  const meta = el("p", { className: "meta" }, [`#${result.position} · `])
  if (result.date) meta.appendChild(el("time", { datetime: result.date, text: result.date }))
  else meta.appendChild(document.createTextNode("no date"))
  return el("li", null, [
    el("h3", null, [link(title, result.link)]),
    el("div", { className: "url", text: result.link }),
    meta,
    el("p", { className: "snippet", text: result.snippet })
  ])
}

/** The results a search gives when `num` is left out, and the most Tavily's API lets one ask for. */
const DEFAULT_NUM = 10
const TAVILY_MAX_RESULTS = 20

/**
 * The same search as the compatible wires take it: Tavily's POST /tavily/search and SearXNG's
 * GET /searxng/search (its JSON; no result count there: it answers pages of 10).
 * @param {{ keywords: string; num: number | undefined; freshness?: string }} body
 */
const showCompatibleCurls = (body) => {
  /** @type {{ query: string; max_results: number; time_range?: string }} */
  const tavily = { query: body.keywords, max_results: Math.min(body.num ?? DEFAULT_NUM, TAVILY_MAX_RESULTS) }
  const searxng = new URLSearchParams({ q: body.keywords, format: "json" })
  if (body.freshness) {
    tavily.time_range = body.freshness
    searxng.set("time_range", body.freshness)
  }
  showCode("search-tavily-curl", curlOf("POST", "/tavily/search", tavily, false))
  showCode("search-searxng-curl", curlOf("GET", `/searxng/search?${searxng.toString()}`, undefined, false))
}

byId("search-form", HTMLFormElement).addEventListener("submit", async (event) => {
  event.preventDefault()
  if (needKey("search-status")) return
  /** @type {{ keywords: string; num: number | undefined; freshness?: string }} */
  const body = { keywords: byId("search-keywords", HTMLInputElement).value, num: numberOf(byId("search-num", HTMLInputElement)) }
  const freshness = byId("search-freshness", HTMLSelectElement).value
  if (freshness) body.freshness = freshness
  showCode("search-curl", curlOf("POST", "/api/search/webSearch", body, false))
  showCompatibleCurls(body)
  const list = byId("search-results")
  list.replaceChildren()
  list.setAttribute("aria-busy", "true")
  setStatus("search-status", "Searching…")
  const started = performance.now()
  try {
    const response = await request("POST", "/api/search/webSearch", body)
    const json = /** @type {{ data?: { query: string; organic: Array<WebResult> } } | null} */ (await readJson(response))
    if (!response.ok || !json || !json.data) {
      setStatus("search-status", errorMessage(response.status, json), true)
      return
    }
    for (const result of json.data.organic) list.appendChild(webResult(result))
    showCode("search-json", JSON.stringify(json, null, 2))
    const count = json.data.organic.length
    setStatus("search-status", `${count}${count === 1 ? " result" : " results"} for “${json.data.query}” in ${elapsed(started)}.`)
  } catch (error) {
    setStatus("search-status", `Request failed: ${messageOf(error)}`, true)
  } finally {
    list.removeAttribute("aria-busy")
  }
})

// --- image search ------------------------------------------------------------

/**
 * One image as POST /api/search/imageSearch returns it.
 * @typedef {{ title?: string; url: string; refUrl?: string; width?: number; height?: number }} ImageResult
 */

/** @param {string | undefined} url */
const hostOf = (url) => {
  try {
    return new URL(String(url)).host
  } catch {
    return String(url)
  }
}

/**
 * A figure for the image, or null when its URL is not http(s).
 * @param {ImageResult} result
 */
const imageResult = (result) => {
  const src = safeUrl(result.url)
  if (src === null) return null
  const caption = result.title || hostOf(result.refUrl || result.url)
  const image = el("img", {
    src,
    alt: result.title || `Image from ${hostOf(result.refUrl || result.url)}`,
    loading: "lazy",
    decoding: "async",
    referrerpolicy: "no-referrer",
    width: typeof result.width === "number" ? String(result.width) : null,
    height: typeof result.height === "number" ? String(result.height) : null
  })
  return el("li", null, [
    el("figure", null, [
      image,
      el("figcaption", null, [caption, el("br"), link(`Source: ${hostOf(result.refUrl)}`, result.refUrl)])
    ])
  ])
}

byId("images-form", HTMLFormElement).addEventListener("submit", async (event) => {
  event.preventDefault()
  if (needKey("images-status")) return
  const body = { keywords: byId("images-keywords", HTMLInputElement).value, num: numberOf(byId("images-num", HTMLInputElement)) }
  showCode("images-curl", curlOf("POST", "/api/search/imageSearch", body, false))
  const grid = byId("images-results")
  grid.replaceChildren()
  setStatus("images-status", "Searching…")
  const started = performance.now()
  try {
    const response = await request("POST", "/api/search/imageSearch", body)
    const json = /** @type {{ data?: Array<ImageResult> } | null} */ (await readJson(response))
    if (!response.ok || !json || !Array.isArray(json.data)) {
      setStatus("images-status", errorMessage(response.status, json), true)
      return
    }
    for (const result of json.data) {
      const item = imageResult(result)
      if (item !== null) grid.appendChild(item)
    }
    const count = json.data.length
    setStatus("images-status", `${count}${count === 1 ? " image" : " images"} in ${elapsed(started)}.`)
  } catch (error) {
    setStatus("images-status", `Request failed: ${messageOf(error)}`, true)
  }
})

// --- start -------------------------------------------------------------------

initChat()
initMcp()
initKeyForm(() => {
  void loadModels()
  void loadMcp()
})
const initial = location.hash.slice(1)
selectTab(tabs.includes(initial) ? initial : "search", false)
void loadModels()
void loadMcp()
