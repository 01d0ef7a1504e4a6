/**
 * Tells a file that only claims to be HTML (a `.html` name, a text/html header)
 * from a page: random bytes, an image or an archive under an HTML name would
 * otherwise be indexed as a page of mojibake. Judged on the first
 * 8 KiB: a known binary signature, NUL bytes, undecodable or control
 * characters, or no markup at all. Pure and cheap (one decode of 8 KiB).
 */
import { declaredEncoding } from "./HtmlBytes.ts"

const SNIFF_BYTES = 8192
/** Above this share of undecodable or control characters the bytes are not text. */
const MAX_BAD_SHARE = 0.05

const startsWith = (bytes: Uint8Array, ...signature: ReadonlyArray<number>) =>
  bytes.length >= signature.length && signature.every((b, i) => bytes[i] === b)

const ascii = (bytes: Uint8Array, offset: number, text: string) =>
  bytes.length >= offset + text.length && [...text].every((c, i) => bytes[offset + i] === c.charCodeAt(0))

/** The kind of file a binary signature names, or undefined. */
const signatureKind = (bytes: Uint8Array): string | undefined => {
  if (startsWith(bytes, 0x89, 0x50, 0x4e, 0x47)) return "a PNG image"
  if (startsWith(bytes, 0xff, 0xd8, 0xff)) return "a JPEG image"
  if (ascii(bytes, 0, "GIF8")) return "a GIF image"
  if (ascii(bytes, 0, "RIFF") && ascii(bytes, 8, "WEBP")) return "a WebP image"
  if (ascii(bytes, 0, "%PDF-")) return "a PDF document"
  if (startsWith(bytes, 0x50, 0x4b, 0x03, 0x04)) return "a ZIP archive"
  if (startsWith(bytes, 0x1f, 0x8b)) return "gzip-compressed data"
  if (startsWith(bytes, 0x28, 0xb5, 0x2f, 0xfd)) return "zstd-compressed data"
  if (ascii(bytes, 0, "BZh")) return "bzip2-compressed data"
  if (startsWith(bytes, 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00)) return "xz-compressed data"
  if (startsWith(bytes, 0x7f, 0x45, 0x4c, 0x46)) return "an executable (ELF)"
  if (ascii(bytes, 0, "wOF2") || ascii(bytes, 0, "wOFF")) return "a web font"
  if (startsWith(bytes, 0x00, 0x00, 0x00) && ascii(bytes, 4, "ftyp")) return "an MP4/MOV video"
  return undefined
}

const isUtf16 = (label: string | undefined) => label !== undefined && /^utf-?16/i.test(label)

/**
 * Why `bytes` are not an HTML page ("a PNG image", "binary data: 41% of the first
 * 8 KiB is not text", "no HTML markup"), or undefined when they may be one.
 * Empty input is not judged here: an empty page is "no main text" downstream.
 */
export const notHtml = (bytes: Uint8Array, contentType?: string): string | undefined => {
  if (bytes.length === 0) return undefined
  const kind = signatureKind(bytes)
  if (kind !== undefined) return `${kind}, not HTML`
  const head = bytes.subarray(0, SNIFF_BYTES)
  const label = declaredEncoding(head, contentType)
  // UTF-16 text has NUL bytes in every ASCII character; it is judged after decoding only.
  if (!isUtf16(label) && head.includes(0)) return "binary data (NUL bytes), not HTML"
  let text: string
  try {
    text = new TextDecoder(label ?? "utf-8").decode(head)
  } catch {
    text = new TextDecoder("utf-8").decode(head)
  }
  // A cut at 8 KiB may split one multi-byte character: allow for it.
  let bad = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0xfffd || (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c) || c === 0x7f) bad++
  }
  const share = text.length === 0 ? 0 : Math.max(0, bad - 1) / text.length
  if (share > MAX_BAD_SHARE) return `binary data (${Math.round(share * 100)}% of the first ${Math.round(head.length / 1024) || 1} KiB is not text), not HTML`
  if (!/<[a-zA-Z!?\/]/.test(text)) return "no HTML markup"
  return undefined
}
