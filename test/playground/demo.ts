/**
 * Demo data for the playground tests and the README screenshot (our own
 * words and drawings): pages about periscopes with dates and images, an
 * image server on loopback that draws the images, and a scripted chat model
 * that reasons, answers and calls a tool when one is offered (and answers
 * slowly, or breaks off mid-stream, when asked to).
 */
import { createServer, type Server } from "node:http"
import type { ScriptedChatOptions } from "../../core/backends/ScriptedChat.ts"
import type { IndexDocument } from "../../core/index/Document.ts"

const palette = ["#0a58a8", "#1d6b35", "#8a3ffc", "#b34700", "#a4161a", "#00708a", "#5a5f66", "#6b4e00"]

/** Serves `/img/<name>.svg`: a drawn tile with the name on it, so image results load without leaving loopback. */
export const startImageServer = async (): Promise<{ readonly url: string; readonly requests: Array<string>; close(): Promise<void> }> => {
  const requests: Array<string> = []
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? "")
    const match = /^\/img\/([a-z0-9-]+)\.svg$/.exec(req.url ?? "")
    if (match === null) {
      res.writeHead(404).end()
      return
    }
    const name = match[1]!
    const colour = palette[[...name].reduce((sum, c) => sum + c.charCodeAt(0), 0) % palette.length]!
    const label = name.replace(/-/g, " ")
    res.writeHead(200, { "content-type": "image/svg+xml", "cache-control": "no-store" }).end(
      `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="200" viewBox="0 0 320 200">` +
        `<rect width="320" height="200" fill="${colour}"/>` +
        `<circle cx="250" cy="60" r="34" fill="none" stroke="#fff" stroke-width="8"/>` +
        `<path d="M274 84l28 28" stroke="#fff" stroke-width="8" stroke-linecap="round"/>` +
        `<text x="20" y="170" font-family="sans-serif" font-size="22" fill="#fff">${label}</text></svg>`
    )
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done()))
  }
}

export const demoDocuments = (images: string): ReadonlyArray<IndexDocument> => [
  {
    url: "https://periscope.invalid/guide/how-a-periscope-works",
    title: "How a periscope works",
    text: "A periscope is a tube with two mirrors or prisms set at 45 degrees, one at each end. Light from the scene enters the upper window, turns down the tube, and turns again into the eye at the lower window, so an observer can see over an obstacle without being seen.",
    date: "2024-03-18",
    images: [{ url: `${images}/img/two-mirrors.svg`, alt: "Two mirrors at 45 degrees inside a periscope tube" }]
  },
  {
    url: "https://periscope.invalid/guide/submarine-periscopes",
    title: "Submarine periscopes: optics and masts",
    text: "A submarine periscope adds lenses between the prisms to magnify the view and to widen the field. The mast is raised through the sail while the boat stays at periscope depth; modern boats replace the optical tube with a camera mast.",
    date: "2023-11-02",
    images: [
      { url: `${images}/img/submarine-mast.svg`, alt: "A periscope mast raised above a submarine's sail" },
      { url: `${images}/img/camera-mast.svg`, alt: "A camera mast that replaces the optical periscope" }
    ]
  },
  {
    url: "https://periscope.invalid/guide/trench-periscopes",
    title: "Trench periscopes and box periscopes",
    text: "Simple box periscopes made of wood or card with two flat mirrors let soldiers look over a parapet. The same design makes a classroom periscope: two mirrors, a long box, and a window at each end.",
    date: "2022-07-14",
    images: [{ url: `${images}/img/box-periscope.svg`, alt: "A box periscope made of card with two mirrors" }]
  },
  {
    url: "https://periscope.invalid/guide/build-your-own",
    title: "Build your own periscope",
    text: "Cut two windows at opposite ends and opposite sides of a long box, glue a small mirror at 45 degrees behind each window, and look through the lower one. A longer box sees higher; wider mirrors give a wider view.",
    date: null,
    images: [{ url: `${images}/img/build-steps.svg`, alt: "Steps to build a periscope from a box" }]
  },
  {
    url: "https://periscope.invalid/guide/prisms-or-mirrors",
    title: "Prisms or mirrors?",
    text: "Right-angle prisms reflect by total internal reflection, losing less light than a silvered mirror and never tarnishing, which is why instrument periscopes use prisms while toy periscopes use mirrors.",
    date: "2025-01-09",
    images: [{ url: `${images}/img/right-angle-prism.svg`, alt: "A right-angle prism turning a ray of light" }]
  }
]

export const DEMO_MODELS = ["periscope-demo", "periscope-demo-small"] as const

/** Reasons, then answers with its sources; calls `lookup` instead when the request offers that tool. */
export const demoChat: ScriptedChatOptions = {
  models: [...DEMO_MODELS],
  replies: (request) => {
    const last = request.messages[request.messages.length - 1]
    const asked = typeof last?.content === "string" ? last.content : ""
    if (asked.includes("slowly")) {
      return { content: "Light enters the upper window and turns down the tube, then turns again into the eye. ".repeat(8), delayMs: 150 }
    }
    if (asked.includes("break off")) {
      return { content: "A periscope has two mirrors and then", failAfter: 3, failure: { reason: "upstream", message: "the demo model broke off" } }
    }
    // Grounded (web_search_options): the gateway gave numbered sources; cite two and invent a third,
    // which the gateway's verification must remove before the page sees it.
    const grounded = request.messages.some((m) => m.role === "system" && typeof m.content === "string" && m.content.startsWith("A web search was conducted"))
    if (grounded) {
      return { content: "Instrument periscopes use prisms [1], which lose less light than mirrors [2]. Some use fibre [7]." }
    }
    const offersLookup = (request.tools ?? []).some((tool) => tool.type === "function" && tool.function?.name === "lookup")
    if (offersLookup) {
      return {
        reasoning: "The user asks about prisms; the lookup tool can fetch the guide page.",
        toolCalls: [{ name: "lookup", arguments: { topic: "prisms", limit: 2 } }]
      }
    }
    return {
      reasoning: "The question is how a periscope works. Two pages of the guide answer it: the one on mirrors and the one on prisms.",
      content:
        "A periscope turns light twice: a mirror or prism at 45 degrees at the top sends the view down the tube, and a second one at the bottom turns it into your eye. Instrument periscopes use prisms, which lose less light than mirrors.\n\nSources: https://periscope.invalid/guide/how-a-periscope-works and https://periscope.invalid/guide/prisms-or-mirrors"
    }
  }
}

/** A tool list as the page's tools field takes it. */
export const lookupTool = [{
  type: "function",
  function: {
    name: "lookup",
    description: "Fetch a page of the periscope guide by topic",
    parameters: { type: "object", properties: { topic: { type: "string" }, limit: { type: "integer" } }, required: ["topic"] }
  }
}]
