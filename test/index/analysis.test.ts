import { describe, expect, it } from "vitest"
import { Analyzer, TokenKind, type TokenSink } from "../../core/index/analysis/Analyzer.ts"
import { foldTerm } from "../../core/index/analysis/Folding.ts"
import { seeded } from "./support.ts"

const terms = (text: string, analyzer = new Analyzer()) => {
  const out: Array<{ term: string; position: number; kind: number; raw: string }> = []
  analyzer.analyze(text, (term, position, start, end, kind) => void out.push({ term, position, kind, raw: text.slice(start, end) }))
  return out
}
const words = (text: string) => terms(text).map((t) => t.term)

describe("folding", () => {
  it("folds case and diacritics", () => {
    expect(foldTerm("Éclair")).toBe("eclair")
    expect(foldTerm("naïve")).toBe("naive")
    expect(foldTerm("Straße")).toBe("strasse")
    expect(foldTerm("Ørsted")).toBe("orsted")
    expect(foldTerm("ＨＴＴＰ")).toBe("http") // fullwidth
    expect(foldTerm("ﬁle")).toBe("file") // ligature
  })

  it("keeps Japanese voicing marks and Hangul syllables intact", () => {
    expect(foldTerm("が")).toBe("が")
    expect(foldTerm("검색")).toBe("검색")
  })
})

describe("analysis", () => {
  it("stems English words and drops stop words but keeps their positions", () => {
    const out = terms("The running of the foxes")
    expect(out.map((t) => [t.term, t.position])).toEqual([["run", 1], ["fox", 4]])
  })

  it("segments Chinese and Japanese into dictionary words", () => {
    expect(words("我们的搜索引擎支持中文")).toEqual(expect.arrayContaining(["搜索", "引擎", "中文"]))
    const japanese = words("東京都に住んでいます。日本語の検索エンジン")
    expect(japanese).toEqual(expect.arrayContaining(["東京", "日本語", "検索", "エンジン"]))
    // Mixed scripts split at the script boundary.
    expect(words("Python3の使い方")).toEqual(expect.arrayContaining(["python3", "使い方"]))
  })

  it("matches accented and unaccented spellings", () => {
    expect(words("café crème brûlée")).toEqual(words("cafe creme brulee"))
  })

  it("keeps technical tokens whole and also indexes their parts", () => {
    const out = terms("HTTP/2 node.js utf-8 C++ C# .NET os.path.join foo_bar")
    const compounds = out.filter((t) => t.kind === TokenKind.Compound).map((t) => t.term)
    expect(compounds).toEqual(["http/2", "node.js", "utf-8", "c++", "c#", ".net", "os.path.join", "foo_bar"])
    const parts = out.filter((t) => t.kind === TokenKind.Part).map((t) => t.term)
    expect(parts).toEqual(expect.arrayContaining(["http", "2", "node", "js", "utf", "8", "c", "net", "os", "path", "join", "foo", "bar"]))
    // A compound sits at the position of its first part; the next word follows its last part.
    const node = out.find((t) => t.term === "node.js")!
    expect(out.find((t) => t.term === "node")!.position).toBe(node.position)
    expect(out.find((t) => t.term === "js")!.position).toBe(node.position + 1)
  })

  it("treats sentence punctuation as punctuation", () => {
    expect(words("It ends here. Next sentence")).toEqual(["end", "here", "next", "sentenc"])
    expect(terms("version 3.11.").find((t) => t.kind === TokenKind.Compound)?.term).toBe("3.11")
  })

  it("drops the possessive and joins apostrophe words", () => {
    expect(words("Python's O'Reilly don't")).toEqual(["python", "oreilli", "dont"])
  })

  it("reports the exact span of each term in the text", () => {
    for (const t of terms("Ünïcode café, HTTP/2 and 日本語")) {
      expect(t.raw.length).toBeGreaterThan(0)
      if (t.kind !== TokenKind.Compound) expect(foldTerm(t.raw).startsWith(t.term.slice(0, 1))).toBe(true)
    }
  })

  it("handles any input without throwing", () => {
    const samples = ["", " ", "\u0000\uffff", "\ud800", "a".repeat(10_000), "🙂🙂 emoji 🙂", "-".repeat(50), "...a...", ".", "+#"]
    for (const s of samples) expect(() => terms(s)).not.toThrow()
    expect(words("a".repeat(100))).toEqual([]) // over-long words are not indexed
  })

  it("analyzeFor finds the same matching terms, at the same places, as analyze", () => {
    const analyzer = new Analyzer()
    const text = "Running servers with Node.js and HTTP/2; the server runs café code, os.path.join and a_run. 検索エンジン"
    const wanted = ["run", "node.js", "cafe", "join", "检索", "検索"]
    const spans = (emit: (sink: TokenSink) => void) => {
      const found: Array<string> = []
      emit((term, _position, start, end) => {
        if (wanted.includes(term)) found.push(`${term}@${start}-${end}`)
      })
      return found
    }
    const filtered = spans((sink) => analyzer.analyzeFor(text, wanted, sink))
    expect(filtered).toEqual(spans((sink) => analyzer.analyze(text, sink)))
    expect(filtered.length).toBeGreaterThanOrEqual(6)
  })

  it("keeps a word's first two letters in every stem of three letters or more, and its first three in every stem of four or more (what analyzeFor's filter looks at)", () => {
    // Random words of letters, syllables and the suffixes Porter rewrites; a term of one or two
    // letters is looked for by its initial alone ("eyed" is "ei", "ies" is "i").
    const random = seeded(17)
    const letters = "abcdefghijklmnopqrstuvwxyz"
    const syllables = ["a", "e", "i", "o", "u", "y", "b", "c", "s", "t", "at", "bl", "iz", "ss", "ey", "ay"]
    const suffixes = ["", "s", "es", "ies", "sses", "ed", "eed", "ing", "y", "ly", "ational", "tional", "izer", "ation", "ness", "ful", "ive", "ize", "e", "ement", "ent"]
    const analyzer = new Analyzer()
    let checked = 0
    let longer = 0
    for (let n = 0; n < 30_000; n++) {
      const head = letters[Math.floor(random() * 26)]! + Array.from({ length: Math.floor(random() * 3) }, () => syllables[Math.floor(random() * syllables.length)]!).join("")
      const word = head + suffixes[Math.floor(random() * suffixes.length)]!
      const term = analyzer.normalizeWord(random() < 0.5 ? word : word[0]!.toUpperCase() + word.slice(1))
      if (term.length < 3) continue
      checked++
      expect(term.slice(0, 2), word).toBe(word.slice(0, 2).toLowerCase())
      if (term.length < 4) continue
      longer++
      expect(term.slice(0, 3), word).toBe(word.slice(0, 3).toLowerCase())
    }
    expect(checked).toBeGreaterThan(10_000)
    expect(longer).toBeGreaterThan(5_000)
  })

  it("analyzeFor passes over runs of words none of which it looks for, and nothing else", () => {
    // Random texts of ASCII words, connectors, symbols and letters past ASCII, looking for the
    // terms of a few of the same pieces: the same matches as analyze. The pieces include stems
    // that change a word's second letter ("ays" is "ai") or leave one letter ("eed" is "e").
    const random = seeded(3)
    const pieces = [
      "data", "node", "run", "runs", "x", "io", "ays", "Days", "eyed", "eed", "o'reilly", "don’t", "c++", "C#", "x.y", "ies", "flies", "Relational", "ayed",
      // Words sharing their first two letters, not their third: the filter looks at three.
      "interpolate", "Internal", "int", "he'll", "hello", "O'Neil", "keys", "key", "relay", "reliable",
      ".", "-", "_", "/", "::", "'s", "++", "#", " ", " ", "é", "Über", "東京", "\n",
      // A combining mark, a space and a dash past ASCII, an astral letter, a digit first, a letter past ASCII inside a word.
      "e\u0301", "\u00a0", "—", "\u{1d400}x", "2d", "2", "naïve", "ve"
    ]
    const pick = () => pieces[Math.floor(random() * pieces.length)]!
    const analyzer = new Analyzer()
    let long = 0
    for (let n = 0; n < 2_000; n++) {
      // Every fourth text long enough to be passed over by regular expression, not by the loop;
      // every other one of words apart (runs of their own), the rest run together.
      const text = Array.from({ length: n % 4 === 0 ? 900 : 40 }, pick).join(n % 8 < 4 ? " " : "")
      if (text.length >= 2048) long++
      const wanted = [...new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, () => terms(pick()).map((t) => t.term)).flat())]
      const found = (emit: (sink: TokenSink) => void) => {
        const out: Array<string> = []
        emit((term, _position, start, end) => {
          if (wanted.includes(term)) out.push(`${term}@${start}-${end}`)
        })
        return out
      }
      expect(found((sink) => analyzer.analyzeFor(text, wanted, sink)), `${text} / ${wanted.join(" ")}`).toEqual(found((sink) => analyzer.analyze(text, sink)))
    }
    expect(long).toBeGreaterThan(400)
  })
})
