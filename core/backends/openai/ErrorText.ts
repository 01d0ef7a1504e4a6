/**
 * Safe text for upstream failures. Upstream error messages are passed on to
 * our callers (they explain a 400 better than we can), but never a credential:
 * the target's key, header values and URL password are cut out, and so is
 * anything shaped like a bearer token or an sk- key, since servers echo keys
 * back ("Incorrect API key provided: sk-...").
 */
import { Predicate, Redacted } from "effect"
import type { UpstreamTarget } from "../../chat/Upstream.ts"

const MAX_LENGTH = 500
const REDACTED = "[redacted]"

/** The strings that must never leave in an error: key, header values, URL credentials. */
export const secretsOf = (target: UpstreamTarget): ReadonlyArray<string> => {
  const secrets: Array<string> = []
  if (target.apiKey !== undefined) secrets.push(Redacted.value(target.apiKey))
  for (const value of Object.values(target.headers)) secrets.push(value)
  try {
    const url = new URL(target.baseUrl)
    if (url.password !== "") secrets.push(url.password, decodeURIComponent(url.password))
    if (url.username !== "") secrets.push(url.username, decodeURIComponent(url.username))
  } catch {
    // An unparsable base URL fails at request time with a message that does not quote it.
  }
  // Short values (a "1" header) would shred messages and hide nothing worth hiding.
  return secrets.filter((s) => s.length >= 6).sort((a, b) => b.length - a.length)
}

const tokenShapes = /\b(Bearer|Basic)\s+[^\s"',;]+|\bsk-[A-Za-z0-9_*.-]{6,}/g

/** Removes credentials from text, collapses whitespace and caps the length. */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
  out = out.replace(tokenShapes, (match, scheme: string | undefined) => (scheme !== undefined ? `${scheme} ${REDACTED}` : REDACTED))
  out = out.replace(/\s+/g, " ").trim()
  return out.length > MAX_LENGTH ? `${out.slice(0, MAX_LENGTH)}...` : out
}

const messageOf = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (!Predicate.isObject(value)) return undefined
  if (typeof value.message === "string") return value.message
  if (value.error !== undefined) return messageOf(value.error)
  if (typeof value.detail === "string") return value.detail
  if (value.detail !== undefined) return JSON.stringify(value.detail)
  return undefined
}

/**
 * The message of an upstream error body: OpenAI's {error:{message}}, a bare
 * {error:"..."}, FastAPI's {detail}, or plain text. Undefined when there is
 * nothing readable (an empty body, an HTML error page from a proxy).
 */
export const errorBodyText = (body: string): string | undefined => {
  const trimmed = body.trim()
  if (trimmed === "" || trimmed.startsWith("<")) return undefined
  try {
    return messageOf(JSON.parse(trimmed)) ?? trimmed
  } catch {
    return trimmed
  }
}

/** The message of a parsed error object (a stream's error event), if it has one. */
export const errorValueText = (value: unknown): string | undefined => messageOf(value)
