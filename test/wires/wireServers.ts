/**
 * For the Tavily and SearXNG wire tests: a loopback site whose pages the servers read, a
 * SearXNG stand-in (test/support/searchProviders.ts) listing pages on two hosts of that site
 * and one elsewhere, and Periscope servers in this process built by the application's own
 * composition over the Node platform: the local fixture index fused with the stand-in,
 * webFetch allowed to reach the site, and the chat model each test asks for.
 */
import { Layer } from "effect"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { appLayer } from "../../core/app/Application.ts"
import { type KeyRecord, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import type { ChatModel } from "../../core/chat/ChatModel.ts"
import type { ConfigFile } from "../../core/config/ConfigFile.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { send, serveSite, type Site } from "../fetch/support.ts"
import { type StandIn, startStandIn } from "../support/searchProviders.ts"
import { type InProcessServer, serveInProcess } from "../support/servers.ts"

export const WIRE_KEY = "wire-test-key-0123456789"

const page = (title: string, paragraphs: ReadonlyArray<string>, image?: string) =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body><nav>Home | About | Contact</nav><main><article><h1>${title}</h1>` +
  paragraphs.map((p) => `<p>${p}</p>`).join("") +
  (image === undefined ? "" : `<p><img src="${image}" alt="${title} diagram"></p>`) +
  "</article></main><footer>Copyright footer text</footer></body></html>"

export const ALPHA_PARAGRAPHS = [
  "The alpha telescope collects light from distant galaxies with a mirror six metres wide, polished over two years by a team of opticians.",
  "Its cooling system keeps the detector at minus one hundred degrees, so the faint infrared glow of dust clouds stands out against the sky.",
  "Visitors may tour the observatory on Saturdays, when the dome is opened and the mirror is shown to the public under red light."
]
export const BETA_PARAGRAPHS = [
  "The beta reactor design uses molten salt as both fuel carrier and coolant, which keeps the core at ordinary pressure.",
  "Engineers chose a graphite moderator because it slows neutrons without absorbing many of them."
]

export interface WireWorld {
  readonly site: Site
  readonly standIn: StandIn
  /** The page on 127.0.0.1, the one on localhost (another host of the same site), one on example.org that no one can fetch. */
  readonly alphaUrl: string
  readonly betaUrl: string
  readonly gammaUrl: string
  /** The config file's search and fetch sections that fuse the stand-in and let webFetch reach the site. */
  readonly config: ConfigFile
  close(): Promise<void>
}

export const startWireWorld = async (): Promise<WireWorld> => {
  let imageUrl = ""
  const site = await serveSite({
    "/alpha.html": (q, r) => send(page("Alpha telescope", ALPHA_PARAGRAPHS, imageUrl), "text/html; charset=utf-8")(q, r),
    "/beta.html": send(page("Beta reactor", BETA_PARAGRAPHS), "text/html; charset=utf-8")
  })
  imageUrl = `${site.origin}/alpha-diagram.png`
  const alphaUrl = `${site.origin}/alpha.html`
  const betaUrl = `http://localhost:${site.port}/beta.html`
  const gammaUrl = "https://example.org/gamma"
  const standIn = await startStandIn("searxng", [
    { title: "Alpha telescope", url: alphaUrl, snippet: "The alpha telescope collects light from distant galaxies.", date: "2026-11-20" },
    { title: "Beta reactor", url: betaUrl, snippet: "The beta reactor design uses molten salt." },
    { title: "Gamma notes", url: gammaUrl, snippet: "Gamma notes about telescopes and reactors." }
  ], [{ url: "https://example.org/img/telescope.png", refUrl: gammaUrl, title: "A telescope" }])
  return {
    site,
    standIn,
    alphaUrl,
    betaUrl,
    gammaUrl,
    config: {
      search: { providers: [{ name: "web", kind: "searxng", baseUrl: standIn.url }] },
      fetch: { allowHosts: [site.host, `localhost:${site.port}`] }
    },
    close: async () => {
      await standIn.close()
      await site.close()
    }
  }
}

export interface WireServerOptions {
  readonly config?: ConfigFile
  /** The local index's documents; default the fixture's sample documents. */
  readonly documents?: ReadonlyArray<IndexDocument>
  /** A chat model in place of the config's; none: the config decides (chat.grounded false and no upstream: no model). */
  readonly chat?: Layer.Layer<ChatModel>
  readonly keys?: ReadonlyArray<KeyRecord>
  readonly expressLane?: boolean
}

/** A Periscope Node server in this process over the fixture index and the given config. */
export const startWireServer = (options: WireServerOptions = {}): Promise<InProcessServer> => {
  const services = appLayer(settingsOf(options.config ?? {}), options.keys ?? recordsFromPlainKeys([WIRE_KEY], 1_000_000), {
    search: { _tag: "Layer", layer: FixtureSearch.layer(options.documents ?? sampleDocuments) },
    ...(options.chat === undefined ? {} : { chatModel: options.chat })
  }).pipe(Layer.provide(nodePlatform), Layer.orDie)
  return serveInProcess(services, options.expressLane === undefined ? {} : { expressLane: options.expressLane })
}

/** A model that answers with the URLs of the sources grounding gave it, so a test sees what the answer was grounded on. */
export const sourcesEchoChat = ScriptedChat.layer({
  models: ["echo-1"],
  replies: (request) => ({ content: `Grounded on: ${(request.grounding?.sources ?? []).map((s) => s.url).join(" ") || "nothing"}` })
})
