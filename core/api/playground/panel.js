// @ts-check
/**
 * What each playground panel does around a request: check that a key is
 * saved, show the equivalent curl, read the form's numbers, time the answer.
 */
import { byId, setStatus } from "./dom.js"
import { apiKey } from "./key.js"

/** @param {string} text */
const shellQuote = (text) => `'${text.replace(/'/g, "'\\''")}'`

/**
 * The request as curl, with the key read from the environment, never the real key.
 * @param {"GET" | "POST"} method
 * @param {string} path
 * @param {unknown} body
 * @param {boolean} stream
 * @param {Record<string, string>} [extra] more headers, as request() sends them
 * @returns {string}
 */
export const curlOf = (method, path, body, stream, extra) => {
  const lines = [`curl -sS${stream ? " -N" : ""}${method === "GET" ? "" : ` -X ${method}`} ${shellQuote(location.origin + path)}`]
  lines.push('  -H "Authorization: Bearer $PERISCOPE_API_KEY"')
  for (const [name, value] of Object.entries(extra ?? {})) lines.push(`  -H ${shellQuote(`${name}: ${value}`)}`)
  if (body !== undefined) {
    lines.push("  -H 'Content-Type: application/json'")
    lines.push(`  -d ${shellQuote(JSON.stringify(body))}`)
  }
  return lines.join(" \\\n")
}

/**
 * Fills a <details> box's code with the text and shows it.
 * @param {string} id
 * @param {string} text
 */
export const showCode = (id, text) => {
  const box = byId(id)
  const code = box.querySelector("code")
  if (code !== null) code.textContent = text
  box.hidden = false
}

/**
 * True (with a status saying so and the key field focused) when no key is saved.
 * @param {string} statusId
 */
export const needKey = (statusId) => {
  if (apiKey() !== "") return false
  setStatus(statusId, "Enter an API key above first.", true)
  byId("api-key").focus()
  return true
}

/**
 * The field's number, or undefined when it is empty.
 * @param {HTMLInputElement} input
 * @returns {number | undefined}
 */
export const numberOf = (input) => {
  const value = input.value.trim()
  return value === "" ? undefined : Number(value)
}

/**
 * The time since `started` (from performance.now()) as "840 ms" or "1.2 s".
 * @param {number} started
 */
export const elapsed = (started) => {
  const ms = performance.now() - started
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`
}
