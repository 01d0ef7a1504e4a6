/**
 * A page read for a question (webFetch's `query`): the chunks of its Markdown most relevant to
 * the query, in page order, each with the path of headings it sits under ("Install > From a
 * tarball"). The passages are chosen by the one passage choice (Highlights.ts: whole sentences,
 * the engine's analysis) over the page's text with its heading lines blanked, so that a heading
 * is a chunk's label and never its content; the Markdown's own structure gives the paths
 * (ATX and setext headings, none inside fenced code). A Markdown chunk that starts or ends
 * inside a fenced block gets the fence it lacks. Choosing reads the whole page, so it is a job
 * (`pageChunksJob`) that the job runner runs off the answering thread.
 */
import { defineJob } from "../jobs/Job.ts"
import { highlightPassages, highlightQuery, PASSAGE_SEPARATOR } from "./Highlights.ts"
import { plainLine } from "./MarkdownText.ts"

/** One chunk of a page: the headings above it, outermost first, joined with " > " ("" above the first heading), and its text. */
export interface PageChunk {
  readonly heading: string
  readonly text: string
}

/** Between two chunks in the joined content, as between highlight passages. */
export const CHUNK_SEPARATOR = PASSAGE_SEPARATOR

/** Between the headings of a path. */
export const HEADING_SEPARATOR = " > "

export interface ChunkRequest {
  /** The page as Markdown (webFetch's markdown content). */
  readonly markdown: string
  /** The query, as a search's keywords. */
  readonly query: string
  /** The chunks joined with CHUNK_SEPARATOR, at most this many characters. */
  readonly maxChars: number
  /** Chunks as plain text (format text) rather than Markdown. */
  readonly plain: boolean
}

/** Where a heading's section starts in the text passages are chosen from, and its path. */
interface Section {
  readonly start: number
  readonly path: string
}

/** A fenced block's opening line, for a chunk that starts inside the block. */
interface Fence {
  readonly start: number
  readonly end: number
  readonly opener: string
  readonly closer: string
}

/** The text passages are chosen from, its sections and its fenced blocks (offsets into that text). */
interface PageText {
  readonly text: string
  readonly sections: ReadonlyArray<Section>
  readonly fences: ReadonlyArray<Fence>
}

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/
const FENCE = /^ {0,3}(`{3,}|~{3,})/
const SETEXT_1 = /^ {0,3}=+[ \t]*$/
const SETEXT_2 = /^ {0,3}-+[ \t]*$/
/** A line a setext underline cannot make a heading of: a list item, a quote, a table row. */
const NOT_PARAGRAPH = /^\s*(?:[-*+>|]|\d+[.)]\s)/

/** A heading's words: no link targets, emphasis, permalink marks or closing hashes. */
const headingText = (raw: string): string =>
  plainLine(raw).replace(/[¶§#]+\s*$/u, "").replace(/\s+/g, " ").trim()

/** The page's lines read once: headings blanked (their length kept) and recorded with their paths, fences found. */
const pageText = (markdown: string, plain: boolean): PageText => {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n")
  const out: Array<string> = []
  const sections: Array<Section> = []
  const fences: Array<Fence> = []
  const path: Array<{ readonly level: number; readonly text: string }> = []
  let offset = 0
  let fence: { readonly marker: string; readonly start: number; readonly opener: string } | undefined
  const push = (line: string) => {
    out.push(line)
    offset += line.length + 1
  }
  const enter = (level: number, text: string, start: number) => {
    while (path.length > 0 && path[path.length - 1]!.level >= level) path.pop()
    if (text !== "") path.push({ level, text })
    sections.push({ start, path: path.map((h) => h.text).join(HEADING_SEPARATOR) })
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const marker = FENCE.exec(line)?.[1]
    if (fence !== undefined) {
      // A fence closes with the same character, at least as long, and nothing after it.
      if (marker !== undefined && marker[0] === fence.marker[0] && marker.length >= fence.marker.length && line.trim() === marker) {
        fences.push({ start: fence.start, end: offset + line.length, opener: fence.opener, closer: line.trim() })
        fence = undefined
        push(plain ? "" : line)
      } else push(plain ? line.trimEnd() : line)
      continue
    }
    if (marker !== undefined) {
      fence = { marker, start: offset, opener: line.trim() }
      push(plain ? "" : line)
      continue
    }
    const atx = ATX.exec(line)
    if (atx !== null) {
      enter(atx[1]!.length, headingText(atx[2] ?? ""), offset)
      push(" ".repeat(plain ? 0 : line.length))
      continue
    }
    const next = lines[i + 1]
    if (next !== undefined && line.trim() !== "" && !NOT_PARAGRAPH.test(line) && (SETEXT_1.test(next) || SETEXT_2.test(next))) {
      enter(SETEXT_1.test(next) ? 1 : 2, headingText(line), offset)
      push(" ".repeat(plain ? 0 : line.length))
      push(" ".repeat(plain ? 0 : next.length))
      i++
      continue
    }
    push(plain ? plainLine(line) : line)
  }
  // A fence never closed runs to the end of the page.
  if (fence !== undefined) fences.push({ start: fence.start, end: offset, opener: fence.opener, closer: fence.marker })
  return { text: out.join("\n"), sections, fences }
}

/** The last item whose start is at or before `at`, by binary search over items sorted by start. */
const lastAtOrBefore = <A extends { readonly start: number }>(items: ReadonlyArray<A>, at: number): A | undefined => {
  let lo = 0
  let hi = items.length - 1
  let found: A | undefined
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (items[mid]!.start <= at) {
      found = items[mid]
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}

/** A chunk's lines as written, without trailing spaces, at most one blank line in a row, none at its ends. */
const tidy = (text: string): string =>
  text.split("\n").map((line) => line.trimEnd()).join("\n").replace(/\n{3,}/g, "\n\n").replace(/^\n+|\n+$/g, "")

/** A Markdown chunk's text with the fences it lacks: the opener of a block it starts in, the closer of one it ends in. */
const fenced = (page: PageText, start: number, end: number, text: string): string => {
  const opened = lastAtOrBefore(page.fences, start)
  const startsInside = opened !== undefined && start > opened.start && start < opened.end
  const closing = lastAtOrBefore(page.fences, Math.max(start, end - 1))
  const endsInside = closing !== undefined && end > closing.start && end < closing.end
  return `${startsInside ? `${opened.opener}\n` : ""}${text}${endsInside ? `\n${closing.closer}` : ""}`
}

/** `text` cut to at most `max` characters, at a line end or a space in its last half when there is one. */
const cutTo = (text: string, max: number): string => {
  if (text.length <= max) return text
  const line = text.lastIndexOf("\n", max)
  if (line >= max / 2) return text.slice(0, line).trimEnd()
  const space = text.lastIndexOf(" ", max)
  return (space >= max / 2 ? text.slice(0, space) : text.slice(0, max)).trimEnd()
}

/** The length of the chunks joined with CHUNK_SEPARATOR. */
export const joinedLength = (chunks: ReadonlyArray<PageChunk>): number =>
  chunks.reduce((sum, chunk, i) => sum + chunk.text.length + (i === 0 ? 0 : CHUNK_SEPARATOR.length), 0)

/** The chunks' texts as one content string. */
export const joinChunks = (chunks: ReadonlyArray<PageChunk>): string => chunks.map((chunk) => chunk.text).join(CHUNK_SEPARATOR)

/**
 * The chunks of the page most relevant to the query, in page order, within `maxChars` joined;
 * none for a page without text. A page none of whose sentences holds a query word gives its opening.
 */
export const pageChunks = (request: ChunkRequest): Array<PageChunk> => {
  const maxChars = Math.max(0, Math.floor(request.maxChars))
  const page = pageText(request.markdown, request.plain)
  const passages = highlightPassages(page.text, highlightQuery(request.query), { maxChars, wholeWhenFits: false })
  const chunks: Array<PageChunk> = []
  for (const passage of passages) {
    // Passages next to each other are given as one: split again where a heading falls between them.
    let from = passage.start
    const cuts = page.sections.filter((s) => s.start > passage.start && s.start < passage.end).map((s) => s.start)
    for (const to of [...cuts, passage.end]) {
      const raw = tidy(page.text.slice(from, to))
      if (raw !== "") {
        chunks.push({ heading: lastAtOrBefore(page.sections, from)?.path ?? "", text: request.plain ? raw : fenced(page, from, to, raw) })
      }
      from = to
    }
  }
  // Splits and added fences may pass the budget by a little: the last chunks give way.
  while (chunks.length > 0 && joinedLength(chunks) > maxChars) {
    const last = chunks[chunks.length - 1]!
    const room = maxChars - (joinedLength(chunks) - last.text.length)
    if (room >= Math.min(80, last.text.length)) chunks[chunks.length - 1] = { ...last, text: cutTo(last.text, room) }
    else chunks.pop()
  }
  return chunks
}

/** pageChunks as a job. */
export const pageChunksJob = defineJob<ChunkRequest, Array<PageChunk>>(import.meta.url, "pageChunks", pageChunks)
