/**
 * Removes what is never main content before the content is chosen: code and
 * embeds, navigation, page headers and footers, sidebars, hidden elements,
 * cookie banners, and the navigation bars documentation generators emit
 * (DocBook's navheader/navfooter, Sphinx's related bar and sidebar).
 *
 * Only declared structure and names are used here (tags, ARIA roles, ids and
 * class names); guessing from text statistics is left to the content chooser.
 */

const ALWAYS = new Set([
  "script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "link", "meta",
  "button", "input", "select", "textarea", "dialog", "nav", "aside", "menu"
])

const BOILERPLATE_ROLES = new Set([
  "navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog", "menu", "menubar",
  "toolbar", "tablist"
])

// Exact class or id names: "sidebar" alone is not here because DocBook uses it for a content box.
const BOILERPLATE_NAMES = new Set([
  "navheader", "navfooter", "related", "sphinxsidebar", "sphinxsidebarwrapper", "headerlink", "breadcrumb",
  "breadcrumbs", "skip-link", "skiplink", "skip-to-content", "skip-nav", "share", "sharing", "social-share",
  "share-buttons", "social-links", "advert", "advertisement", "ad-slot", "ads", "newsletter-signup", "masthead",
  "site-header", "site-footer", "page-footer", "global-header", "global-footer", "footer", "widget-area",
  "navbar", "topbar", "mainmenu", "main-menu", "site-nav", "site-navigation", "comments", "comment-respond",
  // Previous/next page links at the end of an article (pydata, Read the Docs, WordPress themes).
  "prev-next-area", "prev-next-bottom", "prev-next-footer", "rst-footer-buttons", "pager", "pagination",
  "post-navigation", "nav-links", "nav-previous", "nav-next"
])
const BOILERPLATE_IDS = new Set([...BOILERPLATE_NAMES, "sidebar", "secondary", "header", "footer", "nav", "menu"])

// Cookie and consent banners: generic names ("cookie-banner", "consent_popup") and the common vendors.
const CONSENT_NAME =
  /^(?:cookies?|consent|gdpr|cmp|cc)[-_]?(?:banner|bar|notice|consent|popup|modal|dialog|overlay|container|wrapper|law|message|box|window|notification|policy)s?$|^(?:onetrust|cybotcookiebot|didomi|qc-cmp|truste|usercentrics|cookieconsent|cookiebanner|cookienotice|cookielaw)/i

const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b/i

const isBoilerplate = (element: Element): boolean => {
  const tag = element.localName
  if (ALWAYS.has(tag)) return true
  if (tag === "header") return element.parentElement?.closest("article, main, [role=main]") == null
  if (tag === "footer") return element.parentElement?.closest("blockquote, figure") == null
  if (element.hasAttribute("hidden") || element.getAttribute("aria-hidden") === "true") return true
  const role = element.getAttribute("role")
  if (role !== null && BOILERPLATE_ROLES.has(role.trim().toLowerCase())) return true
  const style = element.getAttribute("style")
  if (style !== null && HIDDEN_STYLE.test(style)) return true
  const id = element.getAttribute("id")
  const className = element.getAttribute("class")
  // Generators derive section ids from headings (a "Comments" section gets id="comments"): not boilerplate.
  const isSection = tag === "section" || (className !== null && /\bsect(?:ion|\d)/.test(className))
  if (id !== null && !isSection && (BOILERPLATE_IDS.has(id.toLowerCase()) || CONSENT_NAME.test(id))) return true
  if (className !== null) {
    for (const name of className.split(/\s+/)) {
      if (name !== "" && (BOILERPLATE_NAMES.has(name.toLowerCase()) || CONSENT_NAME.test(name))) return true
    }
  }
  return false
}

/** Removes boilerplate elements from `document` in place; returns how many subtrees went. */
export const removeBoilerplate = (document: Document): number => {
  const body = document.body ?? document.documentElement
  if (body === null) return 0
  const doomed: Array<Element> = []
  for (const element of body.querySelectorAll("*")) {
    if (isBoilerplate(element)) doomed.push(element)
  }
  // Removing an ancestor takes its descendants along; removing a detached node is harmless.
  for (const element of doomed) element.remove()
  return doomed.length
}
