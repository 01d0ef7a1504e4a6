/**
 * Bytes of an HTML page to text, in the encoding the page states: a byte order
 * mark, then the Content-Type header's charset, then a `<meta charset>` or XML
 * declaration in the first 1,024 bytes, else UTF-8. Undecodable bytes become
 * U+FFFD rather than failing the page.
 */

const PRESCAN_BYTES = 1024

const CHARSET_PARAM = /charset\s*=\s*["']?([\w.:-]+)/i
const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i
const XML_ENCODING = /^<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)["']/i

const bomEncoding = (bytes: Uint8Array): string | undefined => {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8"
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le"
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be"
  return undefined
}

const decoderFor = (label: string | undefined): TextDecoder | undefined => {
  if (label === undefined) return undefined
  try {
    return new TextDecoder(label)
  } catch {
    return undefined // an unknown label: try the next source of truth
  }
}

/** The encoding label a page declares, without decoding it. */
export const declaredEncoding = (bytes: Uint8Array, contentType?: string): string | undefined => {
  const bom = bomEncoding(bytes)
  if (bom !== undefined) return bom
  const fromHeader = contentType === undefined ? undefined : CHARSET_PARAM.exec(contentType)?.[1]
  if (decoderFor(fromHeader) !== undefined) return fromHeader!.toLowerCase()
  // Latin-1 maps each byte to one char, so the ASCII markup of the prefix reads correctly whatever the encoding.
  const prefix = new TextDecoder("latin1").decode(bytes.subarray(0, PRESCAN_BYTES))
  const fromMarkup = XML_ENCODING.exec(prefix)?.[1] ?? META_CHARSET.exec(prefix)?.[1]
  // A page that claims UTF-16 in ASCII markup cannot be UTF-16: browsers treat that as UTF-8.
  if (fromMarkup !== undefined && /^utf-?16/i.test(fromMarkup)) return "utf-8"
  if (decoderFor(fromMarkup) !== undefined) return fromMarkup!.toLowerCase()
  return undefined
}

export const decodeHtml = (bytes: Uint8Array, contentType?: string): string => {
  const decoder = decoderFor(declaredEncoding(bytes, contentType)) ?? new TextDecoder("utf-8")
  // TextDecoder drops a BOM matching its encoding by default.
  return decoder.decode(bytes)
}
