// @ts-check
/**
 * Calls to this server's API with the saved key, and the message of a
 * refused call, for both pages.
 */
import { apiKey } from "./key.js"

/**
 * Sends a request with the saved key (none when there is none); a body goes as JSON.
 * @param {"GET" | "POST"} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {AbortSignal} [signal]
 * @param {Record<string, string>} [extra] more headers (an Accept the endpoint asks for)
 * @returns {Promise<Response>}
 */
export const request = (method, path, body, signal, extra) => {
  /** @type {Record<string, string>} */
  const headers = { ...extra }
  const key = apiKey()
  if (key) headers.Authorization = `Bearer ${key}`
  if (body !== undefined) headers["Content-Type"] = "application/json"
  /** @type {RequestInit} */
  const init = { method, headers }
  if (body !== undefined) init.body = JSON.stringify(body)
  if (signal !== undefined) init.signal = signal
  return fetch(path, init)
}

/**
 * The response's JSON, or null when the body is not JSON. Callers state the
 * shape they expect with a cast and still check each field they read.
 * @param {Response} response
 * @returns {Promise<unknown>}
 */
export const readJson = async (response) => {
  try {
    return await response.json()
  } catch {
    return null
  }
}

/**
 * An error body of either wire family: the search envelope or OpenAI's.
 * @typedef {{ error?: { message?: unknown }; exception?: { detail?: unknown }; message?: unknown }} ErrorBody
 */

/**
 * What went wrong, from the body of a refused request (its status when the body says nothing).
 * @param {number} status
 * @param {unknown} json the parsed body, whatever its shape
 * @returns {string}
 */
export const errorDetail = (status, json) => {
  const body = /** @type {ErrorBody | null} */ (typeof json === "object" ? json : null)
  if (body && body.error && typeof body.error.message === "string") return body.error.message
  if (body && body.exception && typeof body.exception.detail === "string") return body.exception.detail
  if (body && typeof body.message === "string") return body.message
  return `HTTP ${status}`
}

/**
 * "Error <status>: <detail>", pointing at the key field on a 401.
 * @param {number} status
 * @param {unknown} body
 * @returns {string}
 */
export const errorMessage = (status, body) => `Error ${status}: ${errorDetail(status, body)}${keyHint(status)}`

/**
 * The hint a 401 adds.
 * @param {number} status
 */
export const keyHint = (status) => (status === 401 ? " (check the API key above)" : "")

/**
 * A thrown error's message (anything can be thrown).
 * @param {unknown} error
 */
export const messageOf = (error) => (error instanceof Error ? error.message : String(error))
