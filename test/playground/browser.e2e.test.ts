/**
 * The playground and the API reference driven in headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) against our real server on
 * loopback: a web search, an image search, a streamed chat and the MCP
 * panel's tool list and web_search call, typed and clicked as a person would; no console errors; axe-core finds no serious or
 * critical violation; screenshots go to test-output/playground/.
 * Without Chromium the suite skips with its reason (and fails under CI=true).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { resolve } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import { root, type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"
import { demoChat, demoDocuments, lookupTool, startImageServer } from "./demo.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const haveChromium = existsSync(CHROMIUM)
if (!haveChromium) {
  if (process.env.CI === "true") throw new Error(`Chromium is missing at ${CHROMIUM}: the playground tests need it under CI (apt-get install chromium)`)
  console.warn(`skipping the playground browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
}

const outDir = resolve(root, "test-output/playground")
// A name Chromium resolves to loopback: a page opened there sends an Origin /mcp does not accept unless configured.
const NAMED_HOST = "periscope-playground.test"
const MCP_TOOLS = ["web_search", "image_search", "web_fetch", "map_site", "answer"]
const axeSource = readFileSync(resolve(root, "node_modules/axe-core/axe.min.js"), "utf8")

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<unknown> }>
}

/** Serious and critical axe-core violations on the page as it is now (WCAG 2.x A and AA, and best practices). */
const seriousViolations = async (page: Page): Promise<Array<string>> => {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: unknown): Promise<{ violations: Array<AxeViolation> }> } }).axe
    const result = await axe.run(document, { resultTypes: ["violations"] })
    return result.violations
  })
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`)
}

/** The JSON a curl line sends: its -d argument, shell-unquoted. */
const curlBody = (curl: string): unknown => JSON.parse(/ -d '((?:[^']|'\\'')*)'/.exec(curl)![1]!.split("'\\''").join("'"))
/** The URL a curl line asks for. */
const curlUrl = (curl: string): string => /^curl [^']*'([^']+)'/.exec(curl)![1]!

describe.skipIf(!haveChromium)("the playground in headless Chromium", () => {
  let server: RunningServer
  let images: Awaited<ReturnType<typeof startImageServer>>
  let browser: Browser
  let context: BrowserContext
  let page: Page
  const consoleErrors: Array<string> = []

  beforeAll(async () => {
    mkdirSync(outDir, { recursive: true })
    images = await startImageServer()
    server = await startInProcess({
      search: FixtureSearch.layer([
        ...demoDocuments(images.url),
        {
          url: "javascript:alert(document.domain)",
          title: "<img src=x onerror=alert(1)> periscope hostile title",
          text: "A hostile periscope page whose title is markup and whose link is a script URL.",
          date: null
        }
      ]),
      chat: ScriptedChat.layer(demoChat)
    })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", `--host-resolver-rules=MAP ${NAMED_HOST} 127.0.0.1`] })
    context = await browser.newContext({ viewport: { width: 1200, height: 900 }, permissions: ["clipboard-read", "clipboard-write"] })
    page = await context.newPage()
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text())
    })
    page.on("pageerror", (error) => consoleErrors.push(`pageerror: ${error.message}`))
    page.on("dialog", (dialog) => {
      consoleErrors.push(`dialog opened: ${dialog.message()}`)
      void dialog.dismiss()
    })
  })

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await images?.close()
  })

  /** Sends a Responses curl's body with the real key: the event stream's text. */
  const postResponses = async (curl: string): Promise<string> => {
    const response = await fetch(`${server.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(curlBody(curl))
    })
    expect(response.status).toBe(200)
    const text = await response.text()
    expect(text).toContain("event: response.completed")
    return text
  }

  it("loads without a key, with a CSP that allows no inline script, and asks for the key", async () => {
    const response = await page.goto(`${server.url}/`)
    expect(response?.status()).toBe(200)
    const csp = response?.headers()["content-security-policy"] ?? ""
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain("unsafe-inline")
    await expect.poll(() => page.textContent("#key-status")).toContain("No key saved")
    expect(await page.getAttribute("#api-key", "type")).toBe("password")
    expect(await seriousViolations(page)).toEqual([])
    // The axe harness sees a violation when there is one: an unlabelled field.
    await page.evaluate(() => document.body.append(Object.assign(document.createElement("input"), { id: "axe-probe" })))
    expect((await seriousViolations(page)).join("\n")).toContain("critical label")
    await page.evaluate(() => document.getElementById("axe-probe")!.remove())

    // A search without a key is not sent: the page says why and puts focus on the key field.
    await page.fill("#search-keywords", "periscope")
    await page.press("#search-keywords", "Enter")
    await expect.poll(() => page.textContent("#search-status")).toContain("Enter an API key")
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("api-key")

    await page.fill("#api-key", TEST_KEY)
    await page.click("#key-form button[type=submit]")
    await expect.poll(() => page.textContent("#key-status")).toBe("Key saved in this browser.")
    expect(await page.evaluate(() => localStorage.getItem("periscope.apiKey"))).toBe(TEST_KEY)
  })

  it("runs a web search: ranked results with snippets and dates, the curl without the key, untrusted text kept as text", async () => {
    await page.fill("#search-keywords", "periscope prisms mirrors")
    await page.press("#search-keywords", "Enter")
    await expect.poll(() => page.textContent("#search-status")).toMatch(/^\d+ results? for “periscope prisms mirrors”/)
    const results = await page.$$eval("#search-results li", (items) =>
      items.map((li) => ({
        title: li.querySelector("h3")?.textContent ?? "",
        href: li.querySelector("h3 a")?.getAttribute("href") ?? null,
        date: li.querySelector("time")?.getAttribute("datetime") ?? null,
        snippet: li.querySelector(".snippet")?.textContent ?? ""
      })))
    expect(results.length).toBeGreaterThanOrEqual(3)
    expect(results.map((r) => r.title)).toContain("Prisms or mirrors?")
    expect(results.find((r) => r.title === "Prisms or mirrors?")?.date).toBe("2025-01-09")
    expect(results.every((r) => r.snippet.length > 0)).toBe(true)

    const curl = (await page.textContent("#search-curl code")) ?? ""
    expect(curl).toContain(`curl -sS -X POST '${server.url}/api/search/webSearch'`)
    expect(curl).toContain("Authorization: Bearer $PERISCOPE_API_KEY")
    expect(curl).toContain(`"keywords":"periscope prisms mirrors"`)
    expect(curl).not.toContain(TEST_KEY)
    expect(await page.isVisible("#search-curl")).toBe(true)

    // The same search through the compatible wires: Tavily's and SearXNG's, each linked to its reference, and answered.
    const tavily = (await page.textContent("#search-tavily-curl code")) ?? ""
    expect(tavily).toContain(`curl -sS -X POST '${server.url}/tavily/search'`)
    expect(tavily).toContain("Authorization: Bearer $PERISCOPE_API_KEY")
    expect(curlBody(tavily)).toEqual({ query: "periscope prisms mirrors", max_results: 10 })
    const searxng = (await page.textContent("#search-searxng-curl code")) ?? ""
    expect(searxng).toContain(`curl -sS '${server.url}/searxng/search?q=periscope+prisms+mirrors&format=json'`)
    expect(searxng).toContain("Authorization: Bearer $PERISCOPE_API_KEY")
    for (const box of ["#search-tavily-curl", "#search-searxng-curl"]) {
      expect(await page.isVisible(box), box).toBe(true)
      expect(await page.textContent(box), box).not.toContain(TEST_KEY)
    }
    expect(await page.textContent("#search-tavily-curl summary")).toBe("The same search with Tavily's client")
    expect(await page.textContent("#search-searxng-curl summary")).toBe("The same search as SearXNG's JSON")
    expect(await page.getAttribute("#search-tavily-curl a", "href")).toBe("/docs#op-tavily_tavilySearch")
    expect(await page.getAttribute("#search-searxng-curl a", "href")).toBe("/docs#op-searxng_searxngSearch")
    const overTavily = await fetch(`${server.url}/tavily/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(curlBody(tavily))
    })
    expect(overTavily.status).toBe(200)
    expect(((await overTavily.json()) as { results: Array<{ title: string }> }).results.map((r) => r.title)).toContain("Prisms or mirrors?")
    const overSearxng = await fetch(curlUrl(searxng), { headers: { authorization: `Bearer ${TEST_KEY}` } })
    expect(overSearxng.status).toBe(200)
    expect(((await overSearxng.json()) as { results: Array<{ title: string }> }).results.map((r) => r.title)).toContain("Prisms or mirrors?")

    // The hostile result: its title is text, its script link is no link at all.
    await page.fill("#search-keywords", "hostile periscope")
    await page.press("#search-keywords", "Enter")
    await expect.poll(() => page.textContent("#search-results")).toContain("<img src=x onerror=alert(1)> periscope hostile title")
    expect(await page.$$eval("#search-results img", (imgs) => imgs.length)).toBe(0)
    expect(await page.$$eval("a[href^='javascript:']", (links) => links.length)).toBe(0)

    await page.fill("#search-keywords", "periscope")
    await page.press("#search-keywords", "Enter")
    await expect.poll(() => page.textContent("#search-status")).toMatch(/results? for “periscope”/)
    expect(await seriousViolations(page)).toEqual([])
    await page.screenshot({ path: resolve(outDir, "search.png"), fullPage: true })
  })

  it("switches tabs from the keyboard and shows the focus", async () => {
    await page.focus("#tab-search")
    await page.keyboard.press("ArrowRight")
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("tab-images")
    expect(await page.getAttribute("#tab-images", "aria-selected")).toBe("true")
    expect(await page.isVisible("#panel-images")).toBe(true)
    expect(await page.isHidden("#panel-search")).toBe(true)
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)
    expect(outline).toBe("solid")
    // Tab from the selected tab goes into its panel's form.
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("images-keywords")
  })

  it("runs an image search: a grid of loaded images with alt text and source links", async () => {
    await page.fill("#images-keywords", "periscope")
    await page.press("#images-keywords", "Enter")
    await expect.poll(() => page.textContent("#images-status")).toMatch(/^\d+ images? in/)
    const shown = await page.$$eval("#images-results img", (imgs) => (imgs as Array<HTMLImageElement>).map((img) => ({ alt: img.alt, src: img.getAttribute("src") ?? "" })))
    expect(shown.length).toBeGreaterThanOrEqual(4)
    expect(shown.every((img) => img.alt.length > 0 && img.src.startsWith(images.url))).toBe(true)
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>("#images-results img")].every((img) => img.complete && img.naturalWidth > 0))
    const sources = await page.$$eval("#images-results figcaption a", (links) => links.map((a) => a.getAttribute("href")))
    expect(sources.every((href) => href?.startsWith("https://periscope.invalid/guide/"))).toBe(true)
    expect((await page.textContent("#images-curl code")) ?? "").toContain("/api/search/imageSearch")
    expect(await seriousViolations(page)).toEqual([])
    await page.screenshot({ path: resolve(outDir, "images.png"), fullPage: true })
  })

  it("streams a chat: the model picker lists /v1/models, reasoning and content arrive, the curl streams", async () => {
    await page.click("#tab-chat")
    await expect.poll(() => page.$$eval("#chat-model option", (options) => (options as Array<HTMLOptionElement>).map((o) => o.value))).toEqual(["periscope-demo", "periscope-demo-small"])
    await page.selectOption("#chat-model", "periscope-demo")
    await page.fill("#chat-input", "How does a periscope work?")
    await page.press("#chat-input", "Control+Enter")
    await expect.poll(() => page.textContent("#chat-status")).toBe("Answer complete.")
    const answer = page.locator("#chat-transcript article.assistant").last()
    expect(await answer.locator(".reasoning").textContent()).toContain("Two pages of the guide answer it")
    expect(await answer.locator(".content").textContent()).toContain("A periscope turns light twice")
    // URLs in the answer become links.
    expect(await answer.locator(".content a").evaluateAll((links) => links.map((a) => a.getAttribute("href")))).toEqual([
      "https://periscope.invalid/guide/how-a-periscope-works",
      "https://periscope.invalid/guide/prisms-or-mirrors"
    ])
    expect(await answer.locator(".meta").textContent()).toMatch(/finish: stop · \d+ prompt \+ \d+ completion tokens/)
    const curl = (await page.textContent("#chat-curl code")) ?? ""
    expect(curl).toContain(`curl -sS -N -X POST '${server.url}/v1/chat/completions'`)
    expect(curl).toContain(`"stream":true`)
    expect(curl).not.toContain(TEST_KEY)
    // The same request through OpenAI's Responses API, linked to its reference, and answered.
    const responses = (await page.textContent("#chat-responses-curl code")) ?? ""
    expect(responses).toContain(`curl -sS -N -X POST '${server.url}/v1/responses'`)
    expect(responses).toContain("Authorization: Bearer $PERISCOPE_API_KEY")
    expect(curlBody(responses)).toEqual({ model: "periscope-demo", input: "How does a periscope work?", stream: true })
    expect(await page.textContent("#chat-responses-curl")).not.toContain(TEST_KEY)
    expect(await page.isVisible("#chat-responses-curl")).toBe(true)
    expect(await page.textContent("#chat-responses-curl summary")).toBe("The same request through OpenAI's Responses API")
    expect(await page.getAttribute("#chat-responses-curl a", "href")).toBe("/docs#op-responses_createResponse")
    expect(await postResponses(responses)).toContain("A periscope turns light twice")
    expect(await page.getAttribute("#chat-transcript", "aria-live")).toBe("polite")
    expect(await page.getAttribute("#chat-transcript", "aria-busy")).toBeNull()
    expect(await seriousViolations(page)).toEqual([])
    await page.screenshot({ path: resolve(outDir, "chat.png"), fullPage: true })
  })

  it("shows tool calls when the model calls an offered tool, and carries the conversation", async () => {
    await page.click("#chat-form details summary")
    await page.fill("#chat-tools", JSON.stringify(lookupTool))
    await page.fill("#chat-input", "Are prisms better than mirrors?")
    await page.click("#chat-send")
    await expect.poll(() => page.textContent("#chat-status")).toBe("Answer complete.")
    const answer = page.locator("#chat-transcript article.assistant").last()
    expect(await answer.locator("h4").allTextContents()).toContain("Tool calls")
    expect(await answer.locator("li code").textContent()).toBe("lookup")
    expect(JSON.parse((await answer.locator("li pre").textContent()) ?? "null")).toEqual({ topic: "prisms", limit: 2 })
    expect(await answer.locator(".meta").textContent()).toContain("finish: tool_calls")
    // The second request carried the first exchange.
    const curl = (await page.textContent("#chat-curl code")) ?? ""
    expect(curl).toContain("How does a periscope work?")
    expect(curl).toContain(`"tools":[`)
    // Over the Responses API: the turns as input items, the tool in its flat shape; the model calls it there too.
    const responses = (await page.textContent("#chat-responses-curl code")) ?? ""
    const body = curlBody(responses) as { input: Array<{ role: string; content: string }>; tools: Array<unknown> }
    expect(body.input.map((m) => m.role)).toEqual(["user", "assistant", "user"])
    expect(body.input[2]!.content).toBe("Are prisms better than mirrors?")
    expect(body.tools).toEqual([{ type: "function", ...lookupTool[0]!.function }])
    expect(await postResponses(responses)).toContain(`"type":"function_call"`)
    expect(await page.locator("#chat-transcript article").count()).toBe(4)
    await page.fill("#chat-tools", "")
  })

  it("grounds a chat in web search: citations link to the sources the server retrieved, an invented one never shows", async () => {
    await page.selectOption("#chat-web-search", "low")
    try {
      await page.fill("#chat-input", "Do periscopes use prisms or mirrors?")
      await page.click("#chat-send")
      await expect.poll(() => page.textContent("#chat-status")).toBe("Answer complete.")
      expect(await page.textContent("#chat-curl")).toContain("web_search_options")
      const responses = (await page.textContent("#chat-responses-curl code")) ?? ""
      expect((curlBody(responses) as { tools: Array<unknown> }).tools).toEqual([{ type: "web_search", search_context_size: "low" }])
      expect(await postResponses(responses)).toContain(`"type":"web_search_call"`)
      const answer = page.locator("#chat-transcript article.assistant").last()
      const content = await answer.locator(".content").textContent() ?? ""
      expect(content).toContain("prisms [1]")
      expect(content).not.toContain("[7]")
      const sources = await answer.locator("ol li a").evaluateAll((links) => links.map((a) => a.getAttribute("href") ?? ""))
      expect(sources.length).toBeGreaterThan(0)
      // Every link shown is one of the demo index's pages, which the server searched for this request.
      for (const href of sources) expect(href).toMatch(/^https:\/\/periscope\.invalid\//)
      expect(await seriousViolations(page)).toEqual([])
    } finally {
      await page.selectOption("#chat-web-search", "")
    }
  })

  it("stops a stream on Stop, keeping what arrived", async () => {
    await page.fill("#chat-input", "Tell it slowly, please.")
    await page.click("#chat-send")
    const answer = page.locator("#chat-transcript article.assistant").last()
    await expect.poll(() => answer.locator(".content").textContent()).toContain("Light enters")
    expect(await page.getAttribute("#chat-transcript", "aria-busy")).toBe("true")
    await page.click("#chat-stop")
    await expect.poll(() => page.textContent("#chat-status")).toBe("Stopped.")
    expect(await answer.locator(".meta").textContent()).toMatch(/stopped after/)
    const shown = (await answer.locator(".content").textContent()) ?? ""
    expect(shown.length).toBeGreaterThan(0)
    expect(shown.length).toBeLessThan("Light enters the upper window and turns down the tube, then turns again into the eye. ".repeat(8).length)
    expect(await page.isDisabled("#chat-stop")).toBe(true)
    expect(await page.isEnabled("#chat-send")).toBe(true)
    expect(await page.getAttribute("#chat-transcript", "aria-busy")).toBeNull()
  })

  it("shows a mid-stream failure as an alert after what arrived", async () => {
    await page.fill("#chat-input", "Now break off, please.")
    await page.click("#chat-send")
    await expect.poll(() => page.textContent("#chat-status")).toBe("The answer failed mid-stream.")
    const answer = page.locator("#chat-transcript article.assistant").last()
    expect(await answer.locator(".content").textContent()).toBe("A periscope has ")
    expect(await answer.locator("[role=alert]").textContent()).toBe("Stream failed: the demo model broke off")
  })

  it("shows a refused request's error and keeps the message to send again", async () => {
    await page.evaluate(() => localStorage.setItem("periscope.apiKey", "wrong-key-0123456789"))
    await page.fill("#chat-input", "Hello?")
    await page.click("#chat-send")
    await expect.poll(() => page.textContent("#chat-status")).toBe("The request was refused.")
    const error = page.locator("#chat-transcript article.assistant").last().locator(".error")
    expect(await error.textContent()).toMatch(/^Error 401: .*\(check the API key above\)$/)
    expect(await error.getAttribute("role")).toBe("alert")
    // The message stays in the box to send again.
    expect(await page.inputValue("#chat-input")).toBe("Hello?")
    await page.evaluate((key) => localStorage.setItem("periscope.apiKey", key), TEST_KEY)
  })

  it("shows the MCP endpoint, an agent host's entries with the key masked, and the five tools /mcp lists for the held key", async () => {
    await page.click("#tab-mcp")
    expect(await page.isVisible("#panel-mcp")).toBe(true)
    expect(await page.textContent("#mcp-endpoint")).toBe(`${server.url}/mcp`)
    await expect.poll(() => page.textContent("#mcp-status")).toBe(`${MCP_TOOLS.length} tools for this key.`)
    const tools = await page.$$eval("#mcp-tools > li", (items) =>
      items.map((li) => ({
        name: li.querySelector("h4 code")?.textContent ?? "",
        heading: li.querySelector("h4")?.textContent ?? "",
        badges: [...li.querySelectorAll(".badge")].map((b) => b.textContent),
        description: li.querySelector("p")?.textContent ?? "",
        parameters: li.querySelector("summary")?.textContent ?? ""
      })))
    expect(tools.map((t) => t.name)).toEqual(MCP_TOOLS)
    expect(tools[0]!.heading).toBe("web_search Web search")
    for (const tool of tools) {
      expect(tool.badges, tool.name).toEqual(["read-only", "open-world"])
      expect(tool.description.length, tool.name).toBeGreaterThan(20)
    }
    expect(tools[0]!.parameters).toBe(
      "Parameters: query (required), num, freshness, language, region, safeSearch, sources, includeDomains, excludeDomains, content, maxCharsPerResult, maxTokens, expand"
    )
    expect(tools[MCP_TOOLS.indexOf("answer")]!.parameters).toBe("Parameters: question (required)")
    // Opened, the parameters show their rules and descriptions from the input schema.
    const webSearch = page.locator("#mcp-tools > li").first()
    await webSearch.locator("summary").click()
    const schema = (await webSearch.locator("details").textContent()) ?? ""
    expect(schema).toContain("num optional: integer · ≥ 1, ≤ 100, default 10")
    expect(schema).toContain("What to search for: keywords or a question.")
    expect(schema).toContain(`one of "off", "moderate", "strict"`)

    // The HTTP entry: masked until asked for; Show key reveals it, Copy puts the real one on the clipboard.
    const entryShown = async () => JSON.parse((await page.textContent("#mcp-http-config")) ?? "null")
    const masked = { mcpServers: { periscope: { type: "http", url: `${server.url}/mcp`, headers: { Authorization: "Bearer ••••••••••••" } } } }
    expect(await entryShown()).toEqual(masked)
    expect(await page.textContent("#panel-mcp")).not.toContain(TEST_KEY)
    await page.click("#mcp-reveal")
    expect(await page.getAttribute("#mcp-reveal", "aria-pressed")).toBe("true")
    expect((await entryShown()).mcpServers.periscope.headers.Authorization).toBe(`Bearer ${TEST_KEY}`)
    await page.click("#mcp-reveal")
    expect(await page.getAttribute("#mcp-reveal", "aria-pressed")).toBe("false")
    expect(await entryShown()).toEqual(masked)
    await page.click("#mcp-copy")
    await expect.poll(() => page.textContent("#mcp-copy-status")).toBe("Copied, with your key.")
    const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()))
    expect(copied.mcpServers.periscope.headers.Authorization).toBe(`Bearer ${TEST_KEY}`)
    // The copied entry is what an MCP client needs: the SDK's client connects with it and lists the same tools.
    const entry = copied.mcpServers.periscope as { url: string; headers: Record<string, string> }
    const client = new Client({ name: "playground-entry", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }))
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(MCP_TOOLS)
    } finally {
      await client.close()
    }

    const panel = (await page.textContent("#panel-mcp")) ?? ""
    expect(panel).toContain(`"command": "npx", "args": ["periscope", "mcp"]`)
    expect(panel).toContain("node adapters/node/cli.ts mcp")
    expect(await seriousViolations(page)).toEqual([])
    await page.screenshot({ path: resolve(outDir, "mcp.png"), fullPage: true })
  })

  it("tries web_search over MCP: the tool's text result, a bad argument's message naming it, an isError result", async () => {
    await page.fill("#mcp-try-query", "periscope prisms")
    await page.press("#mcp-try-query", "Enter")
    await expect.poll(() => page.textContent("#mcp-try-status")).toMatch(/^web_search answered in \d/)
    const text = (await page.textContent("#mcp-try-result")) ?? ""
    expect(text).toMatch(/^Results for "periscope prisms":\n\n\[1\] /)
    expect(text).toContain("URL: https://periscope.invalid/guide/prisms-or-mirrors")
    expect(text).toContain("Date: 2025-01-09")
    expect(await page.getAttribute("#mcp-try-result", "class")).toBe("tool-result")
    const curl = (await page.textContent("#mcp-try-curl code")) ?? ""
    expect(curl).toContain(`curl -sS -X POST '${server.url}/mcp'`)
    expect(curl).toContain("-H 'Accept: application/json, text/event-stream'")
    expect(curl).toContain(`"method":"tools/call","params":{"name":"web_search","arguments":{"query":"periscope prisms","num":5}}`)
    expect(curl).not.toContain(TEST_KEY)
    expect(JSON.parse((await page.textContent("#mcp-try-json code")) ?? "null").result.structuredContent.query).toBe("periscope prisms")
    expect(await seriousViolations(page)).toEqual([])

    // Blank words pass the field's `required` but not the tool's rule: a -32602 naming the argument.
    await page.fill("#mcp-try-query", "   ")
    await page.click("#mcp-try-form button[type=submit]")
    await expect.poll(() => page.textContent("#mcp-try-status")).toMatch(/^Error -32602: query: must be a non-empty string/)
    expect(await page.isHidden("#mcp-try-result")).toBe(true)

    // No results is a tool result the model reads (isError), shown as an error.
    await page.fill("#mcp-try-query", "zeppelin quasar")
    await page.click("#mcp-try-form button[type=submit]")
    await expect.poll(() => page.textContent("#mcp-try-status")).toMatch(/^web_search answered with an error the model would read \(isError\)/)
    expect(await page.textContent("#mcp-try-result")).toMatch(/^No results for "zeppelin quasar"/)
    expect(await page.getAttribute("#mcp-try-result", "class")).toBe("tool-result error")
  })

  it("shows the 401 message on the MCP tab for a wrong key, and lists the tools again with the right one", async () => {
    await page.fill("#api-key", "wrong-key-0123456789")
    await page.click("#key-form button[type=submit]")
    await expect.poll(() => page.textContent("#mcp-status")).toBe("Error 401: Authorization: invalid API key (check the API key above)")
    expect(await page.getAttribute("#mcp-status", "class")).toBe("status bad")
    expect(await page.locator("#mcp-tools > li").count()).toBe(0)
    await page.fill("#mcp-try-query", "periscope")
    await page.click("#mcp-try-form button[type=submit]")
    await expect.poll(() => page.textContent("#mcp-try-status")).toBe("Error 401: Authorization: invalid API key (check the API key above)")
    expect(await seriousViolations(page)).toEqual([])

    await page.fill("#api-key", TEST_KEY)
    await page.click("#key-form button[type=submit]")
    await expect.poll(() => page.textContent("#mcp-status")).toBe(`${MCP_TOOLS.length} tools for this key.`)
  })

  it("says what to configure when /mcp refuses the page's origin (opened at a host name)", async () => {
    const named = await context.newPage()
    try {
      const origin = `http://${NAMED_HOST}:${new URL(server.url).port}`
      await named.goto(`${origin}/#mcp`)
      expect(await named.isVisible("#panel-mcp")).toBe(true)
      await named.fill("#api-key", TEST_KEY)
      await named.click("#key-form button[type=submit]")
      await expect.poll(() => named.textContent("#mcp-status")).toMatch(/^Error 403: Origin "http:\/\/periscope-playground\.test:\d+" is not allowed/)
      const status = (await named.textContent("#mcp-status")) ?? ""
      expect(status).toContain(`add "${origin}" to mcp.allowedOrigins in the config file`)
      expect(await named.textContent("#mcp-endpoint")).toBe(`${origin}/mcp`)
    } finally {
      await named.close()
    }
  })

  it("renders the API reference at /docs from /openapi.json with the kept key", async () => {
    const response = await page.goto(`${server.url}/docs`)
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'")
    await expect.poll(() => page.textContent("#docs-status")).toMatch(/^OpenAPI 3\.\d+\.\d+: \d+ operations\.$/)
    const operations = await page.$$eval("section.endpoint h3", (hs) => hs.map((h) => h.textContent))
    expect(operations).toEqual(expect.arrayContaining([
      "POST /api/search/webSearch",
      "POST /api/search/imageSearch",
      "POST /v1/chat/completions",
      "GET /v1/models"
    ]))
    // The anchors the playground's compatible-wire curls link to.
    for (const id of ["op-tavily_tavilySearch", "op-searxng_searxngSearch", "op-responses_createResponse"]) {
      expect(await page.locator(`#${id}`).count(), id).toBe(1)
    }
    const webSearch = page.locator("#op-search_webSearch")
    expect(await webSearch.locator("table th[scope=row]").allTextContents()).toEqual(expect.arrayContaining(["200", "400", "401", "429"]))
    // The request body's reference links to its schema, which lists its fields with their rules.
    await webSearch.locator("a[href='#schema-SearchRequest']").first().click()
    const schema = page.locator("#schema-SearchRequest")
    expect(await schema.textContent()).toContain("keywords required")
    expect(await schema.textContent()).toMatch(/num optional: integer · ≥ 1, ≤ 100/)
    expect(await seriousViolations(page)).toEqual([])
    await page.screenshot({ path: resolve(outDir, "docs.png"), fullPage: false })

    // Forgetting the key clears it and the page says what it needs.
    await page.click("#key-forget")
    expect(await page.evaluate(() => localStorage.getItem("periscope.apiKey"))).toBeNull()
    await expect.poll(() => page.textContent("#docs-status")).toContain("Enter an API key")
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("api-key")
  })

  it("logged no console error, no page error and opened no dialog", () => {
    expect(consoleErrors.filter((e) => !/status of 401/.test(e))).toEqual([])
  })
})
