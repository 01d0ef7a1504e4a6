/** Identifiers of completions and tool calls: a prefix and 24 random base62 characters. */
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

export const randomId = (prefix: string, length = 24): string => {
  const bytes = new Uint8Array(length)
  crypto.getRandomValues(bytes)
  let out = prefix
  // 62 * 4 = 248 < 256: rejecting nothing keeps a slight bias that ids can afford.
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i]! % 62]
  return out
}

export const completionId = (): string => randomId("chatcmpl-")
export const toolCallId = (): string => randomId("call_")
