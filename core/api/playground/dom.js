// @ts-check
/**
 * DOM helpers both pages use. Text from a response reaches the page through
 * textContent or a checked http(s) href, never as markup.
 */

/**
 * The element with this id, checked to be of the expected kind (a missing or
 * different element is a bug in the page, so it throws).
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @param {{ new (): T; prototype: T }} [kind]
 * @returns {T}
 */
export const byId = (id, kind) => {
  const node = document.getElementById(id)
  const expected = kind ?? HTMLElement
  if (!(node instanceof expected)) throw new Error(`#${id}: no ${expected.name} with this id on the page`)
  return /** @type {T} */ (node)
}

/** @typedef {Record<string, string | null | undefined>} Props */
/** @typedef {ReadonlyArray<Node | string | null | undefined>} Children */

/**
 * An element with text and attributes: `text` sets textContent, `className`
 * the class, any other prop an attribute (null and undefined are left out);
 * children are nodes or strings (as text).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {Children} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export const el = (tag, props, children) => {
  const node = document.createElement(tag)
  if (props) {
    for (const [name, value] of Object.entries(props)) {
      if (value === undefined || value === null) continue
      if (name === "text") node.textContent = value
      else if (name === "className") node.className = value
      else node.setAttribute(name, value)
    }
  }
  for (const child of children ?? []) {
    if (child === null || child === undefined) continue
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child)
  }
  return node
}

/**
 * The URL if it is http(s), else null: links and images from a response never
 * become javascript: or data: URLs.
 * @param {unknown} value
 * @returns {string | null}
 */
export const safeUrl = (value) => {
  if (typeof value !== "string" || value === "") return null
  try {
    const url = new URL(value, location.href)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null
  } catch {
    return null
  }
}

/**
 * A link to the URL when it is http(s), else the text alone.
 * @param {string} text
 * @param {unknown} url
 * @returns {HTMLElement}
 */
export const link = (text, url) => {
  const href = safeUrl(url)
  return href === null ? el("span", { text }) : el("a", { href, rel: "noopener noreferrer", text })
}

/**
 * Writes a status line (a live region), marked bad for errors.
 * @param {string} id
 * @param {string} text
 * @param {boolean} [bad]
 */
export const setStatus = (id, text, bad) => {
  const status = byId(id)
  status.textContent = text
  status.classList.toggle("bad", !!bad)
}
