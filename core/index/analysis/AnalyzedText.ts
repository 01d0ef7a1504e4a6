/**
 * A text's tokens as the Analyzer emits them, recorded so that the index builder can take them
 * on another thread: the build's analysis (tokenizing, folding, stemming: two thirds of its time)
 * then runs on every core, and the builder replays the tokens in page order, the same calls to
 * its sink as analysing the text there, so the snapshot is the same bytes.
 *
 * Plain data (strings and an Int32Array) that crosses a structured clone; the Int32Array's
 * buffer can be transferred. No runtime import of effect: worker threads load this module.
 */
import type { Analyzer } from "./Analyzer.ts"

export interface AnalyzedText {
  /** Distinct terms, in the order of their first token. */
  readonly terms: Array<string>
  /** Three ints a token, in order: the term's index in `terms`, its position, its TokenKind. */
  readonly tokens: Int32Array
  /** What `analyze` returned: the positions the text took (0 for an empty text, which is not analysed). */
  readonly positions: number
}

/** The field texts of one page (or image), each analysed from position 0. */
export type AnalyzedFields = ReadonlyArray<AnalyzedText>

/** Records one text's tokens, as a text is indexed: an empty one is not analysed. */
export class TokenRecorder {
  private readonly analyzer: Analyzer
  private readonly index = new Map<string, number>()
  private terms: Array<string> = []
  private tokens = new Int32Array(3 * 1024)
  private length = 0
  private readonly sink: (term: string, position: number, start: number, end: number, kind: number) => void

  constructor(analyzer: Analyzer) {
    this.analyzer = analyzer
    const sink = (term: string, position: number, _start: number, _end: number, kind: number) => {
      let t = this.index.get(term)
      if (t === undefined) {
        t = this.terms.length
        this.index.set(term, t)
        this.terms.push(term)
      }
      if (this.length + 3 > this.tokens.length) {
        const grown = new Int32Array(this.tokens.length * 2)
        grown.set(this.tokens)
        this.tokens = grown
      }
      this.tokens[this.length++] = t
      this.tokens[this.length++] = position
      this.tokens[this.length++] = kind
    }
    this.sink = sink
  }

  record(text: string): AnalyzedText {
    // A fresh empty record: a worker transfers the tokens' buffer, which detaches it.
    if (text.length === 0) return { terms: [], tokens: new Int32Array(0), positions: 0 }
    this.index.clear()
    this.terms = []
    this.length = 0
    const positions = this.analyzer.analyze(text, this.sink)
    return { terms: this.terms, tokens: this.tokens.slice(0, this.length), positions }
  }
}
