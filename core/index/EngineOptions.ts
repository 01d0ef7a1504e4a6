/**
 * Ranking and analysis settings of an index. They are fixed when the index is built (the
 * BM25F bounds MaxScore relies on are computed from them) and travel inside its snapshot.
 */
import { Schema } from "effect"

export interface EngineOptions {
  /** BM25 term-frequency saturation; default 0.9 (Anserini's BM25 baseline). */
  readonly k1?: number
  /** BM25 length normalisation, 0..1; default 0.4 (Anserini's BM25 baseline). */
  readonly b?: number
  /** BM25F weights of the page fields; a field of weight 0 is not indexed. */
  readonly fieldWeights?: { readonly title?: number; readonly body?: number; readonly url?: number }
  /** BM25F weights of image fields: text (title, alt, caption), context (heading, page title), url. */
  readonly imageFieldWeights?: { readonly text?: number; readonly context?: number; readonly url?: number }
  /** Porter stemming of English words; default true. */
  readonly stemming?: boolean
  /** Weight of the term-proximity bonus (BM25TP) on the best 15 results (Ranker.proximityDepth); 0 gives plain BM25F. Default 1. */
  readonly proximity?: number
  /** Pages whose SimHash fingerprints differ in at most this many bits are one result; -1 keeps all. Default 3. */
  readonly nearDuplicateBits?: number
}

export interface ResolvedEngineOptions {
  readonly k1: number
  readonly b: number
  readonly fieldWeights: { readonly title: number; readonly body: number; readonly url: number }
  readonly imageFieldWeights: { readonly text: number; readonly context: number; readonly url: number }
  readonly stemming: boolean
  readonly proximity: number
  readonly nearDuplicateBits: number
}

export const defaultEngineOptions: ResolvedEngineOptions = {
  k1: 0.9,
  b: 0.4,
  fieldWeights: { title: 2, body: 1, url: 0.5 },
  imageFieldWeights: { text: 1, context: 0.5, url: 0.5 },
  stemming: true,
  proximity: 1,
  nearDuplicateBits: 3
}

/** Engine options that break a rule; `message` names the option and the rule. */
export class InvalidEngineOptions extends Schema.TaggedError<InvalidEngineOptions>()("InvalidEngineOptions", {
  message: Schema.String
}) {}

const number = (name: string, value: number | undefined, fallback: number, min: number, max: number): number => {
  if (value === undefined) return fallback
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new InvalidEngineOptions({ message: `${name}: must be a number from ${min} to ${max} (got ${String(value)})` })
  }
  return value
}

export const resolveEngineOptions = (options: EngineOptions = {}): ResolvedEngineOptions => {
  const d = defaultEngineOptions
  const fw = options.fieldWeights ?? {}
  const iw = options.imageFieldWeights ?? {}
  const resolved: ResolvedEngineOptions = {
    k1: number("k1", options.k1, d.k1, 0, 100),
    b: number("b", options.b, d.b, 0, 1),
    fieldWeights: {
      title: number("fieldWeights.title", fw.title, d.fieldWeights.title, 0, 1000),
      body: number("fieldWeights.body", fw.body, d.fieldWeights.body, 0, 1000),
      url: number("fieldWeights.url", fw.url, d.fieldWeights.url, 0, 1000)
    },
    imageFieldWeights: {
      text: number("imageFieldWeights.text", iw.text, d.imageFieldWeights.text, 0, 1000),
      context: number("imageFieldWeights.context", iw.context, d.imageFieldWeights.context, 0, 1000),
      url: number("imageFieldWeights.url", iw.url, d.imageFieldWeights.url, 0, 1000)
    },
    stemming: options.stemming ?? d.stemming,
    proximity: number("proximity", options.proximity, d.proximity, 0, 100),
    nearDuplicateBits: Math.trunc(number("nearDuplicateBits", options.nearDuplicateBits, d.nearDuplicateBits, -1, 16))
  }
  if (typeof resolved.stemming !== "boolean") throw new InvalidEngineOptions({ message: "stemming: must be true or false" })
  const { title, body, url } = resolved.fieldWeights
  if (title + body + url === 0) throw new InvalidEngineOptions({ message: "fieldWeights: at least one field must have a weight above 0" })
  const image = resolved.imageFieldWeights
  if (image.text + image.context + image.url === 0) {
    throw new InvalidEngineOptions({ message: "imageFieldWeights: at least one field must have a weight above 0" })
  }
  return resolved
}
