/**
 * Makes the README's screenshot, docs/playground.png: the playground on our
 * own demo data (test/playground/demo.ts) after a streamed chat, in
 * headless Chromium. Run: `node test/playground/screenshot.ts [out.png]`.
 */
import { resolve } from "node:path"
import { chromium } from "playwright-core"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import { root, startInProcess, TEST_KEY } from "../support/servers.ts"
import { demoChat, demoDocuments, startImageServer } from "./demo.ts"

const out = resolve(process.argv[2] ?? resolve(root, "docs/playground.png"))
const images = await startImageServer()
const server = await startInProcess({ search: FixtureSearch.layer(demoDocuments(images.url)), chat: ScriptedChat.layer(demoChat) })
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox"] })
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 820 }, deviceScaleFactor: 1 })
  await page.goto(`${server.url}/#chat`)
  await page.fill("#api-key", TEST_KEY)
  await page.click("#key-form button[type=submit]")
  await page.waitForFunction(() => document.querySelectorAll("#chat-model option[value='periscope-demo']").length === 1)
  await page.fill("#chat-input", "How does a periscope work?")
  await page.click("#chat-send")
  await page.waitForFunction(() => document.getElementById("chat-status")?.textContent === "Answer complete.")
  await page.click("#chat-curl summary")
  await page.locator("#chat-input").blur()
  await page.evaluate(() => window.scrollTo(0, 0))
  await page.screenshot({ path: out, fullPage: true })
  console.log(`wrote ${out}`)
} finally {
  await browser.close()
  await server.close()
  await images.close()
}
