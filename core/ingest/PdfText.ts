/**
 * The text of a PDF, page after page, with its title and dates from the document info.
 * unpdf bundles Mozilla's pdf.js built for serverless runtimes: pure JavaScript, no native
 * canvas, the same on Node as on Deno; a broken or encrypted PDF fails with the reason.
 */
import { extractText, getDocumentProxy, getMeta } from "unpdf"

export interface PdfContent {
  readonly title: string
  readonly text: string
  readonly pages: number
  /** ISO 8601 date from ModDate or CreationDate, when the info dictionary has one. */
  readonly date: string | null
}

/** A PDF date ("D:20240131120000+01'00'") as an ISO date, or null. */
export const pdfDate = (value: unknown): string | null => {
  if (typeof value !== "string") return null
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?/.exec(value.trim())
  if (m === null) return null
  const [, year, month = "01", day = "01"] = m
  const iso = `${year}-${month}-${day}`
  return Number.isNaN(Date.parse(iso)) ? null : iso
}

export const pdfText = async (bytes: Uint8Array): Promise<PdfContent> => {
  // pdf.js takes ownership of (and detaches) the buffer it is given: hand it a copy.
  const pdf = await getDocumentProxy(new Uint8Array(bytes))
  try {
    const meta = await getMeta(pdf).catch(() => ({ info: {} as Record<string, unknown> }))
    const { text, totalPages } = await extractText(pdf, { mergePages: false })
    const info = meta.info as Record<string, unknown>
    const title = typeof info.Title === "string" ? info.Title.trim() : ""
    return {
      title,
      text: text.map((page) => page.trim()).filter((page) => page !== "").join("\n\n"),
      pages: totalPages,
      date: pdfDate(info.ModDate) ?? pdfDate(info.CreationDate)
    }
  } finally {
    await pdf.loadingTask.destroy()
  }
}
