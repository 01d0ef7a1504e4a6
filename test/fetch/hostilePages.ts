/**
 * Pages made to cost a reader far more than their size, generated for the tests and the stall
 * bench: HTML nested thousands of elements deep, a PDF whose one stream inflates to hundreds of
 * megabytes, a PDF of tens of thousands of pages, and large ordinary pages.
 */
import { constants, createDeflate } from "node:zlib"

/** `depth` nested `<div>`s around one word. */
export const nestedHtml = (depth: number): string =>
  `<!doctype html><html><head><title>Nested</title></head><body>${"<div>".repeat(depth)}deep${"</div>".repeat(depth)}</body></html>`

const WORDS = "river stone light harbor window garden letter market winter bridge signal forest engine paper voice".split(" ")

/**
 * An ordinary page of about `bytes` bytes under a heading, `seed` making each page different:
 * "links", short paragraphs each with a link (many elements), or "prose", paragraphs of about
 * a thousand characters (few elements, much text).
 */
export const largeHtml = (bytes: number, seed: number, style: "links" | "prose" = "links"): string => {
  const parts = [`<!doctype html><html><head><title>Large page ${seed}</title></head><body><main><h1>Large page ${seed}</h1>`]
  let size = parts[0]!.length
  for (let i = 0; size < bytes; i++) {
    const paragraph = style === "links"
      ? `<p>Paragraph ${i} of page ${seed}: a sentence with <a href="/p${seed}/${i}">a link</a> and some words to read.</p>\n`
      : `<p>${Array.from({ length: 150 }, (_, w) => WORDS[(i * 7 + w * 13 + seed) % WORDS.length]).join(" ")}.</p>\n`
    parts.push(paragraph)
    size += paragraph.length
  }
  parts.push("</main></body></html>")
  return parts.join("")
}

/** A PDF file from its objects (1-based numbers in order); the last object is the catalog's info. */
const pdfFile = (objects: ReadonlyArray<string | Uint8Array>, root: number): Uint8Array => {
  const encoder = new TextEncoder()
  const chunks: Array<Uint8Array> = []
  let length = 0
  const add = (part: string | Uint8Array) => {
    const bytes = typeof part === "string" ? encoder.encode(part) : part
    chunks.push(bytes)
    length += bytes.byteLength
  }
  add("%PDF-1.7\n%\u00e2\u00e3\n")
  const offsets: Array<number> = []
  objects.forEach((object, i) => {
    offsets.push(length)
    add(`${i + 1} 0 obj\n`)
    add(object)
    add("\nendobj\n")
  })
  const xref = length
  add(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`)
  add(`trailer\n<< /Size ${objects.length + 1} /Root ${root} 0 R >>\nstartxref\n${xref}\n%%EOF\n`)
  const out = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}

const deflated = (chunk: Uint8Array, times: number): Promise<Uint8Array> =>
  new Promise((resolve, reject) => {
    const deflate = createDeflate({ level: constants.Z_BEST_COMPRESSION, memLevel: 9 })
    const out: Array<Buffer> = []
    deflate.on("data", (data: Buffer) => out.push(data))
    deflate.on("end", () => resolve(new Uint8Array(Buffer.concat(out))))
    deflate.on("error", reject)
    let written = 0
    const write = () => {
      while (written < times) {
        written++
        if (!deflate.write(chunk)) {
          deflate.once("drain", write)
          return
        }
      }
      deflate.end()
    }
    write()
  })

const FONT = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"

/** A one-page PDF whose content stream, Flate-compressed, inflates to about `inflatedBytes` of text operators. */
export const pdfBomb = async (inflatedBytes: number): Promise<Uint8Array> => {
  const line = "BT /F1 12 Tf 72 720 Td (All work and no play makes a dull page) Tj ET\n"
  const chunk = new TextEncoder().encode(line.repeat(Math.ceil((1024 * 1024) / line.length)))
  const stream = await deflated(chunk, Math.ceil(inflatedBytes / chunk.byteLength))
  return pdfFile([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    new Uint8Array([...new TextEncoder().encode(`<< /Length ${stream.byteLength} /Filter /FlateDecode >>\nstream\n`), ...stream, ...new TextEncoder().encode("\nendstream")]),
    FONT
  ], 1)
}

/** A PDF of `pages` pages (one line of text each, sharing one content stream), in a two-level page tree. */
export const manyPagesPdf = (pages: number): Uint8Array => {
  const content = "BT /F1 12 Tf 72 720 Td (One of very many pages) Tj ET"
  const perNode = Math.ceil(Math.sqrt(pages))
  const nodes = Math.ceil(pages / perNode)
  // 1 catalog, 2 root, 3 font, 4 content, then the intermediate nodes, then the pages.
  const firstNode = 5
  const firstPage = firstNode + nodes
  const objects: Array<string> = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${Array.from({ length: nodes }, (_, n) => `${firstNode + n} 0 R`).join(" ")}] /Count ${pages} >>`,
    FONT,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`
  ]
  for (let n = 0; n < nodes; n++) {
    const kids = Array.from({ length: Math.min(perNode, pages - n * perNode) }, (_, k) => `${firstPage + n * perNode + k} 0 R`)
    objects.push(`<< /Type /Pages /Parent 2 0 R /Kids [${kids.join(" ")}] /Count ${kids.length} >>`)
  }
  for (let p = 0; p < pages; p++) {
    objects.push(`<< /Type /Page /Parent ${firstNode + Math.floor(p / perNode)} 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 3 0 R >> >> >>`)
  }
  return pdfFile(objects, 1)
}
