/**
 * The playground and the API reference driven in headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) against our real server on
 * loopback: a web search, an image search and a streamed chat, typed and
 * clicked as a person would; no console errors; axe-core finds no serious or
 * critical violation; screenshots go to test-output/playground/.
 * Without Chromium the suite skips with its reason (and fails under CI=true).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { resolve } from "node:path"
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
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
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
