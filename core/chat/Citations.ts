/**
 * Citation markers in an answer, verified against the sources retrieved for the request:
 * `[k]` naming a given source becomes a `url_citation` annotation over the marker's span;
 * `[k]` naming none is removed from the text (never a link the model made up) and counted.
 *
 * Indices are UTF-16 code units of the final `content`, end exclusive, so that
 * `content.slice(start_index, end_index)` in JS is the marker: OpenAI's types say only
 * "index of the first / last character", and its JS clients slice with these numbers.
 * Python slices by code points: the same numbers there only for text without astral
 * characters (emoji); docs/fetch-and-grounding.md (From the OpenAI clients) shows the conversion.
 *
 * Streams go through the same scanner as whole answers, so both end alike: text passes
 * as it comes except a tail that may still become a marker (`[` and up to 4 digits).
 * Plain TypeScript: it runs per chunk.
 */
import type { GroundingSource } from "./ChatRequest.ts"

export interface UrlCitation {
  readonly type: "url_citation"
  readonly url_citation: {
    readonly start_index: number
    readonly end_index: number
    readonly title: string
    readonly url: string
  }
}

/** Longest marker number: `[` + 4 digits + `]`. */
const MAX_DIGITS = 4

const isDigit = (code: number) => code >= 48 && code <= 57

export class CitationScanner {
  private tail = ""
  /** Length (UTF-16 units) of the text emitted so far. */
  private emitted = 0
  readonly annotations: Array<UrlCitation> = []
  removed = 0
  private readonly lookup: (n: number) => GroundingSource | undefined

  constructor(lookup: (n: number) => GroundingSource | undefined) {
    this.lookup = lookup
  }

  /** The text that can go out now; a possible marker's start is held back. */
  push(text: string): string {
    const input = this.tail + text
    this.tail = ""
    let out = ""
    let i = 0
    while (i < input.length) {
      const open = input.indexOf("[", i)
      if (open === -1) {
        out += input.slice(i)
        break
      }
      out += input.slice(i, open)
      let j = open + 1
      while (j < input.length && j - open - 1 < MAX_DIGITS && isDigit(input.charCodeAt(j))) j++
      if (j === input.length) {
        // `[` then only digits so far: the next piece decides.
        this.tail = input.slice(open)
        break
      }
      const digits = j - open - 1
      if (digits === 0 || input[j] !== "]") {
        out += "["
        i = open + 1
        continue
      }
      const source = this.lookup(Number(input.slice(open + 1, j)))
      if (source === undefined) this.removed++
      else {
        const start = this.emitted + out.length
        const marker = input.slice(open, j + 1)
        out += marker
        this.annotations.push({
          type: "url_citation",
          url_citation: { start_index: start, end_index: start + marker.length, title: source.title, url: source.url }
        })
      }
      i = j + 1
    }
    this.emitted += out.length
    return out
  }

  /** What was held at the end: not a marker after all. */
  flush(): string {
    const out = this.tail
    this.tail = ""
    this.emitted += out.length
    return out
  }
}

export interface VerifiedText {
  readonly content: string
  readonly annotations: ReadonlyArray<UrlCitation>
  readonly removed: number
}

/** A whole answer's citations, checked the same way a stream's are. */
export const verifyCitations = (content: string, lookup: (n: number) => GroundingSource | undefined): VerifiedText => {
  const scanner = new CitationScanner(lookup)
  const text = scanner.push(content) + scanner.flush()
  return { content: text, annotations: scanner.annotations, removed: scanner.removed }
}
