/**
 * The images of a page's main content (and its `og:image`) as ImageRecords:
 * the best source among `srcset`, lazy-loading attributes and `src`, resolved
 * to an absolute URL, with alt, title, figure caption, nearest heading and the
 * declared size.
 *
 * Skipped: data: URIs, tracking pixels, spacers, icons and decorative images
 * (declared as such with role/aria, or DocBook's "[Note]"-style admonition
 * icons), and repeats of an image already listed.
 */
import type { ImageRecord } from "../index/Document.ts"
import type { ImageSighting } from "./ContentWalk.ts"
import { absoluteHttpUrl } from "./PageLink.ts"
import type { PageMeta } from "./PageMeta.ts"
import { labelText } from "./TextNormalize.ts"

// Lazy loaders keep the real address here and put a placeholder in src.
const LAZY_SRC = ["data-src", "data-lazy-src", "data-original", "data-lazy", "data-hi-res-src", "data-full-src"]
const LAZY_SRCSET = ["data-srcset", "data-lazy-srcset", "srcset"]

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f"

/** The candidates of a srcset, per the HTML parsing rules: a URL (commas allowed inside), then descriptors. */
export const parseSrcset = (srcset: string): Array<{ readonly url: string; readonly descriptor: string }> => {
  const out: Array<{ url: string; descriptor: string }> = []
  const n = srcset.length
  let i = 0
  while (i < n) {
    while (i < n && (isSpace(srcset[i]!) || srcset[i] === ",")) i++
    if (i >= n) break
    const start = i
    while (i < n && !isSpace(srcset[i]!)) i++
    let url = srcset.slice(start, i)
    let descriptor = ""
    if (url.endsWith(",")) {
      url = url.replace(/,+$/, "")
    } else {
      const from = i
      let depth = 0
      for (; i < n; i++) {
        const c = srcset[i]
        if (c === "(") depth++
        else if (c === ")") depth--
        else if (c === "," && depth <= 0) break
      }
      descriptor = srcset.slice(from, i).trim()
    }
    if (url !== "") out.push({ url, descriptor })
  }
  return out
}

/** Largest-first pick from a srcset: by width descriptor, else by density, else the first. */
export const largestSrcsetCandidate = (srcset: string): string | undefined => {
  let best: string | undefined
  let bestSize = -1
  for (const { url, descriptor } of parseSrcset(srcset)) {
    const w = /^(\d+)w$/.exec(descriptor)
    const x = /^(\d*\.?\d+)x$/.exec(descriptor)
    // No descriptor means 1x.
    const size = w !== null ? Number(w[1]) : x !== null ? Number(x[1]) * 1000 : descriptor === "" ? 1000 : 0
    if (best === undefined || size > bestSize) {
      best = url
      bestSize = size
    }
  }
  return best
}

const bestSource = (img: Element, base: string): string | undefined => {
  const srcsets: Array<string> = []
  for (const name of LAZY_SRCSET) {
    const value = img.getAttribute(name)
    if (value) srcsets.push(value)
  }
  const picture = img.parentElement?.localName === "picture" ? img.parentElement : null
  if (picture !== null) {
    for (const source of picture.querySelectorAll("source[srcset], source[data-srcset]")) {
      srcsets.push(source.getAttribute("srcset") ?? source.getAttribute("data-srcset") ?? "")
    }
  }
  for (const srcset of srcsets) {
    const url = absoluteHttpUrl(largestSrcsetCandidate(srcset), base)
    if (url !== undefined) return url
  }
  for (const name of [...LAZY_SRC, "src"]) {
    const url = absoluteHttpUrl(img.getAttribute(name), base)
    if (url !== undefined) return url
  }
  return undefined
}

const dimension = (raw: string | null | undefined): number | undefined => {
  if (raw === null || raw === undefined) return undefined
  const m = /^\s*(\d{1,5})(?:px)?\s*$/i.exec(raw)
  return m === null ? undefined : Number(m[1])
}

// Declared this small, an image is an icon, a spacer or a 1x1 tracking pixel.
const MAX_ICON_SIZE = 32

// Trackers, and the status-badge services READMEs are full of (badges are icons, not pictures).
const TRACKER_HOSTS = [
  "doubleclick.net", "google-analytics.com", "googletagmanager.com", "scorecardresearch.com", "quantserve.com",
  "pixel.wp.com", "stats.wp.com", "bat.bing.com", "pixel.facebook.com", "img.shields.io", "badgen.net",
  "badge.fury.io", "travis-ci.org", "travis-ci.com", "codecov.io", "coveralls.io", "david-dm.org",
  "packagephobia.com", "bundlephobia.com", "app.fossa.com", "deepscan.io", "api.codeclimate.com", "opencollective.com"
]
const SPACER_NAME = /^(?:spacer|pixel|blank|transparent|clear|clearpixel|1x1|dot|trans|shim|tracking|beacon|t|p)$/
const ICON_NAME = /(?:^|[-_.])(?:favicon|icon|icons|sprite|sprites|emoji|badge|badges)(?:[-_.]|$)/
const ICON_DIRECTORY = new Set(["icons", "emoji", "emojis", "smilies", "sprites", "favicons", "badge", "badges"])

/** True for addresses of trackers, spacers and icons, judged by host and path. */
export const isNonContentImageUrl = (url: string): boolean => {
  const parsed = new URL(url)
  const host = parsed.hostname
  if (TRACKER_HOSTS.some((tracker) => host === tracker || host.endsWith(`.${tracker}`))) return true
  if (host === "www.facebook.com" && parsed.pathname === "/tr") return true
  const segments = parsed.pathname.toLowerCase().split("/").filter((s) => s !== "")
  const file = segments.pop() ?? ""
  if (file.endsWith(".ico")) return true
  const name = file.replace(/\.[a-z0-9]+$/, "")
  if (SPACER_NAME.test(name) || ICON_NAME.test(name)) return true
  return segments.some((segment) => ICON_DIRECTORY.has(segment))
}

const FILE_NAME_ALT = /^\S*\.(?:png|jpe?g|gif|svg|webp|avif|bmp|tiff?)$/i

const isDecorative = (img: Element, alt: string): boolean => {
  const role = img.getAttribute("role")
  if (role === "presentation" || role === "none" || img.getAttribute("aria-hidden") === "true") return true
  // DocBook XSL marks admonition icons with a bracketed alt: "[Note]", "[Tip]", "[Warning]".
  return /^\[[^\]]{1,24}\]$/.test(alt)
}

const CAPTION_CONTAINER = /(?:^|\s)(?:mediaobject|figure|informalfigure|wp-caption|image-caption|thumbinner|thumb)(?:\s|$)/
const CAPTION_CHILD = "figcaption, .caption, .title, .wp-caption-text, .thumbcaption, .image-caption"

const captionOf = (img: Element): string | undefined => {
  const figure = img.closest("figure")
  if (figure !== null) {
    const caption = labelText(figure.querySelector("figcaption")?.textContent)
    if (caption !== "") return caption
  }
  for (let node = img.parentElement, depth = 0; node !== null && depth < 6; node = node.parentElement, depth++) {
    if (!CAPTION_CONTAINER.test(node.getAttribute("class") ?? "")) continue
    const caption = labelText(node.querySelector(CAPTION_CHILD)?.textContent)
    if (caption !== "") return caption
  }
  return undefined
}

const orUndefined = (text: string): string | undefined => (text === "" ? undefined : text)

/** The record for one `<img>` of the main content, or undefined when it is not a content image. */
export const imageRecord = (sighting: ImageSighting, base: string): ImageRecord | undefined => {
  const img = sighting.element
  const url = bestSource(img, base)
  if (url === undefined || isNonContentImageUrl(url)) return undefined
  const givenAlt = labelText(img.getAttribute("alt"))
  if (isDecorative(img, givenAlt)) return undefined
  // Generators fill a missing alt with the file path ("../../_images/plot-1.png"): that is no description.
  const alt = FILE_NAME_ALT.test(givenAlt) ? "" : givenAlt
  const width = dimension(img.getAttribute("width"))
  const height = dimension(img.getAttribute("height"))
  if ((width !== undefined && width <= MAX_ICON_SIZE) || (height !== undefined && height <= MAX_ICON_SIZE)) {
    return undefined
  }
  return {
    url,
    alt: orUndefined(alt),
    title: orUndefined(labelText(img.getAttribute("title"))),
    caption: captionOf(img),
    heading: sighting.heading,
    width,
    height
  }
}

/** The page's declared share image (`og:image`, then `twitter:image`). */
export const openGraphImage = (meta: PageMeta, base: string): ImageRecord | undefined => {
  const raw = meta.get("og:image:secure_url") ?? meta.get("og:image") ?? meta.get("og:image:url") ??
    meta.get("twitter:image") ?? meta.get("twitter:image:src")
  const url = absoluteHttpUrl(raw, base)
  if (url === undefined || isNonContentImageUrl(url)) return undefined
  return {
    url,
    alt: orUndefined(labelText(meta.get("og:image:alt") ?? meta.get("twitter:image:alt"))),
    width: dimension(meta.get("og:image:width")),
    height: dimension(meta.get("og:image:height"))
  }
}

/** Content images in page order, then og:image; one record per URL. */
export const pageImages = (
  sightings: ReadonlyArray<ImageSighting>,
  meta: PageMeta,
  base: string
): Array<ImageRecord> => {
  const byUrl = new Map<string, ImageRecord>()
  for (const sighting of sightings) {
    const record = imageRecord(sighting, base)
    if (record === undefined) continue
    const seen = byUrl.get(record.url)
    // A repeat may carry the alt text the first sighting lacked.
    if (seen === undefined) byUrl.set(record.url, record)
    else if (seen.alt === undefined && record.alt !== undefined) byUrl.set(record.url, { ...seen, alt: record.alt })
  }
  const shared = openGraphImage(meta, base)
  if (shared !== undefined && !byUrl.has(shared.url)) byUrl.set(shared.url, shared)
  return [...byUrl.values()]
}
