/**
 * Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), the set Anserini's
 * BM25 baselines use. They keep their positions, so phrases still match across them.
 */
export const englishStopWords: ReadonlySet<string> = new Set([
  "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
  "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with"
])
