/**
 * Reader for the classic SMART-format relevance collections in ../shared/data/ir
 * (Cranfield, MED, ADI): documents, queries and judgments, with the two pitfalls its
 * README names handled here once (Cranfield query numbering, Cranfield grade scale).
 */
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"

export const irDataDir = resolve(import.meta.dirname, "../../../../shared/data/ir")

export interface SmartRecord {
  readonly id: string
  /** Field letter ("T", "W", ...) -> text. */
  readonly fields: Readonly<Record<string, string>>
}

/** Splits a SMART file into records: `.I id` starts one, `.X` lines start fields. */
export const parseSmart = (raw: string): Array<SmartRecord> => {
  const records: Array<SmartRecord> = []
  let current: { id: string; fields: Record<string, string> } | undefined
  let field: string | undefined
  for (const line of raw.replace(/\r/g, "").split("\n")) {
    const start = /^\.I\s+(\S+)/.exec(line)
    if (start !== null) {
      current = { id: String(Number(start[1])), fields: {} }
      records.push(current)
      field = undefined
      continue
    }
    const marker = /^\.([A-Z])\s*$/.exec(line)
    if (marker !== null) {
      field = marker[1]!
      if (current !== undefined) current.fields[field] = current.fields[field] ?? ""
      continue
    }
    if (current !== undefined && field !== undefined) current.fields[field] += `${line}\n`
  }
  return records
}

export interface Collection {
  readonly name: string
  readonly documents: ReadonlyArray<{ readonly id: string; readonly title: string; readonly text: string }>
  readonly queries: ReadonlyArray<{ readonly id: string; readonly text: string }>
  /** Query id -> document id -> gain (> 0 means relevant). */
  readonly judgments: ReadonlyMap<string, ReadonlyMap<string, number>>
}

interface CollectionSpec {
  readonly name: string
  readonly folder: string
  readonly documents: string
  readonly queries: string
  readonly judgments: string
  /** Cranfield numbers queries by file order, not by their .I lines. */
  readonly queryIds: "ordinal" | "declared"
  /** Judgment grade -> gain (0 = not relevant). */
  readonly gain: (grade: number) => number
  readonly expectedJudgedQueries: number
}

const specs: Record<string, CollectionSpec> = {
  cranfield: {
    name: "Cranfield",
    folder: "cranfield",
    documents: "cran.all.1400",
    queries: "cran.qry",
    judgments: "cranqrel",
    queryIds: "ordinal",
    // Grades 1 (complete answer) .. 4 (minimum interest); -1 and 5 are not relevant.
    gain: (grade) => (grade >= 1 && grade <= 4 ? 5 - grade : 0),
    expectedJudgedQueries: 225
  },
  med: {
    name: "MED",
    folder: "med",
    documents: "MED.ALL",
    queries: "MED.QRY",
    judgments: "MED.REL",
    queryIds: "declared",
    gain: () => 1,
    expectedJudgedQueries: 30
  },
  adi: {
    name: "ADI",
    folder: "adi",
    documents: "ADI.ALL",
    queries: "ADI.QRY",
    judgments: "ADI.REL",
    queryIds: "declared",
    gain: () => 1,
    expectedJudgedQueries: 35
  }
}

export type CollectionLoad =
  | { readonly _tag: "Ready"; readonly collection: Collection }
  | { readonly _tag: "Missing"; readonly reason: string }

export const loadCollection = (key: "cranfield" | "med" | "adi"): CollectionLoad => {
  const spec = specs[key]!
  const dir = join(irDataDir, spec.folder)
  for (const file of [spec.documents, spec.queries, spec.judgments]) {
    if (!existsSync(join(dir, file))) return { _tag: "Missing", reason: `${join(dir, file)} not found` }
  }
  const documents = parseSmart(readFileSync(join(dir, spec.documents), "latin1")).map((r) => ({
    id: r.id,
    title: (r.fields.T ?? "").replace(/\s+/g, " ").trim(),
    text: (r.fields.W ?? "").trim()
  }))
  const queries = parseSmart(readFileSync(join(dir, spec.queries), "latin1")).map((r, i) => ({
    id: spec.queryIds === "ordinal" ? String(i + 1) : r.id,
    text: (r.fields.W ?? "").replace(/\s+/g, " ").trim()
  }))
  const judgments = new Map<string, Map<string, number>>()
  for (const line of readFileSync(join(dir, spec.judgments), "latin1").replace(/\r/g, "").split("\n")) {
    const cols = line.trim().split(/\s+/)
    if (cols.length < 2 || cols[0] === "") continue
    const query = String(Number(cols[0]))
    const doc = String(Number(cols[1]))
    const gain = spec.gain(cols.length >= 3 ? Number(cols[2]) : 1)
    if (gain <= 0) continue
    let perQuery = judgments.get(query)
    if (perQuery === undefined) judgments.set(query, (perQuery = new Map()))
    perQuery.set(doc, gain)
  }
  // The README's check: a wrong parse shows up as a wrong number of judged queries.
  const judged = new Set<string>()
  for (const line of readFileSync(join(dir, spec.judgments), "latin1").replace(/\r/g, "").split("\n")) {
    const cols = line.trim().split(/\s+/)
    if (cols.length >= 2 && cols[0] !== "") judged.add(String(Number(cols[0])))
  }
  if (judged.size !== spec.expectedJudgedQueries) {
    throw new Error(`${spec.name}: ${judged.size} judged queries parsed, expected ${spec.expectedJudgedQueries}`)
  }
  return { _tag: "Ready", collection: { name: spec.name, documents, queries, judgments } }
}
