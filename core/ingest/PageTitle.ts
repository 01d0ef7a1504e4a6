/**
 * The page title, from the most to the least trusted source: `og:title`,
 * `<title>`, the first `<h1>`, with the site name cut off ("json — JSON encoder —
 * Python 3.11 documentation" becomes "json — JSON encoder").
 *
 * The site part is found, in order, by a heading on the page that equals the
 * rest of the title, by the declared site name (`og:site_name`,
 * `application-name`), or by the host name ("Docs | example.com").
 */
import { firstMeta, type PageMeta } from "./PageMeta.ts"
import { labelText } from "./TextNormalize.ts"

// A separator needs spaces around it: "CREATE TABLE — define" splits, "e-mail" and "3.11" do not.
const SEPARATOR = /(\s+(?:[|\u2013\u2014\-·•»:~/]|::|--|\u00bb|\u2022)\s+)/

const key = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim()

const documentTitle = (document: Document): string => {
  for (const element of document.querySelectorAll("title")) {
    if (element.closest("svg") === null) return labelText(element.textContent)
  }
  return ""
}

/** "docs.example.co.uk" gives "example": the part of a host a site is named after. */
const hostLabel = (host: string): string => {
  const labels = host.toLowerCase().replace(/^www\d*\./, "").split(".")
  if (labels.length <= 1) return labels[0] ?? ""
  const secondLevel = labels.length >= 3 && labels[labels.length - 2]!.length <= 3
  return labels[labels.length - (secondLevel ? 3 : 2)] ?? ""
}

/**
 * Cuts a site-name prefix or suffix off `title`. `headings` are the page's h1/h2
 * texts, `siteNames` the names the page declares for its site.
 */
export const stripSiteName = (
  title: string,
  headings: ReadonlyArray<string>,
  siteNames: ReadonlyArray<string>,
  host: string
): string => {
  const parts = title.split(SEPARATOR)
  // parts alternates text, separator, text, ...; segments are at even indexes.
  const count = (parts.length + 1) / 2
  if (count < 2) return title
  const join = (from: number, to: number) => parts.slice(from * 2, to * 2 - 1).join("").trim()

  const headingKeys = new Set(headings.map(key).filter((k) => k.length > 0))
  for (let cut = count - 1; cut >= 1; cut--) {
    const prefix = join(0, cut)
    if (headingKeys.has(key(prefix))) return prefix
  }
  for (let cut = 1; cut < count; cut++) {
    const suffix = join(cut, count)
    if (headingKeys.has(key(suffix))) return suffix
  }

  const siteKeys = new Set(siteNames.map(key).filter((k) => k.length > 0))
  const label = hostLabel(host)
  const named = (k: string) => siteKeys.has(k) || (label.length >= 3 && k.replace(/ /g, "") === label)
  // A suffix that merely mentions the host's name ("Python 3.11 documentation") is the site too;
  // a prefix must match exactly, since titles often start with the topic ("Python tutorial | Site").
  const suffix = key(join(count - 1, count))
  if (named(suffix) || (label.length >= 3 && suffix.split(" ").includes(label))) return join(0, count - 1)
  if (named(key(join(0, 1)))) return join(1, count)
  return title
}

export const pageTitle = (
  document: Document,
  meta: PageMeta,
  headings: ReadonlyArray<string>,
  host: string
): string => {
  const raw = labelText(meta.get("og:title")) || documentTitle(document) ||
    labelText(document.querySelector("h1")?.textContent)
  const siteNames = [firstMeta(meta, ["og:site_name"]), firstMeta(meta, ["application-name"])]
    .filter((name): name is string => name !== undefined)
  return stripSiteName(raw, headings, siteNames, host)
}
