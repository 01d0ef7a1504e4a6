/**
 * How large a regular expression becomes on RE2, from its text, before it
 * is compiled: RE2 spells a counted repetition out (`x{1,999}` is 999
 * copies of `x`), and both its compile time and the time a match takes grow
 * with that size, so a short pattern can cost seconds. The estimate counts
 * one per character matched, one per alternative and loop, and multiplies a
 * repeated atom or group by its count; it errs high, never far low.
 */

/** Skips a character class starting at `i` ("["); returns the index after its "]". */
const skipClass = (pattern: string, i: number): number => {
  let j = i + 1
  if (pattern[j] === "^") j++
  if (pattern[j] === "]") j++
  while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1
  return j + 1
}

/** Skips an escape starting at `i` ("\\"); returns the index after it. */
const skipEscape = (pattern: string, i: number): number => {
  const next = pattern[i + 1]
  if ((next === "p" || next === "P" || next === "x" || next === "u" || next === "k") && pattern[i + 2] === "{") {
    const end = pattern.indexOf("}", i + 3)
    return end === -1 ? pattern.length : end + 1
  }
  if (next === "u") return i + 6
  if (next === "x") return i + 4
  if (next === "c") return i + 3
  return i + 2
}

const COUNTED = /^\{(\d+)(?:(,)(\d*))?\}/

/** The estimated size of `pattern` as an RE2 program, in instructions. */
export const patternSize = (pattern: string): number => {
  // Each open group's size so far; the last atom's (or group's) size, for a quantifier after it.
  const groups: Array<number> = [0]
  let last = 0
  let i = 0
  const add = (size: number) => {
    groups[groups.length - 1]! += size
    last = size
  }
  while (i < pattern.length) {
    const c = pattern[i]!
    if (c === "\\") {
      i = skipEscape(pattern, i)
      add(1)
    } else if (c === "[") {
      i = skipClass(pattern, i)
      add(1)
    } else if (c === "(") {
      groups.push(0)
      i++
      // (?:, (?<name>, (?P<name>, (?i) and the like: no size of their own.
      if (pattern[i] === "?") {
        while (i < pattern.length && pattern[i] !== ":" && pattern[i] !== ")" && pattern[i] !== ">") i++
        if (pattern[i] === ":" || pattern[i] === ">") i++
      }
      last = 0
    } else if (c === ")") {
      const group = groups.length > 1 ? groups.pop()! : 0
      add(group + 2)
      i++
    } else if (c === "|") {
      groups[groups.length - 1]! += 1
      last = 0
      i++
    } else if (c === "*" || c === "+" || c === "?") {
      groups[groups.length - 1]! += 1
      i++
      if (pattern[i] === "?") i++
    } else if (c === "{" && COUNTED.test(pattern.slice(i, i + 24))) {
      const [whole, min, comma, max] = pattern.slice(i, i + 24).match(COUNTED)!
      // {n}: n copies; {n,m}: m copies, the last m - n optional; {n,}: n copies and a loop.
      const copies = comma === undefined ? Number(min) : max === "" ? Number(min) + 1 : Math.max(Number(min), Number(max))
      groups[groups.length - 1]! += last * (copies - 1) + copies
      last *= copies
      i += whole.length
      if (pattern[i] === "?") i++
    } else {
      add(1)
      i++
    }
  }
  while (groups.length > 1) {
    const group = groups.pop()!
    groups[groups.length - 1]! += group
  }
  return groups[0]!
}

/** The most one pattern may expand to: about a few milliseconds to compile. */
export const MAX_PATTERN_SIZE = 5_000

/** The most the patterns of one request's schemas may expand to together (compiled when it arrives). */
export const MAX_REQUEST_PATTERN_SIZE = 20_000

/** What is left for the patterns of one request (see MAX_REQUEST_PATTERN_SIZE). */
export interface PatternBudget {
  left: number
}

export const requestPatternBudget = (): PatternBudget => ({ left: MAX_REQUEST_PATTERN_SIZE })

const sizeRule = "counted repetitions such as {1,999} are spelled out, each copy a step"

/**
 * Why a pattern may not be compiled: too large alone, or for what is left of the request's
 * budget, which it is charged to. Checked before anything is compiled.
 */
export const patternSizeProblem = (pattern: string, budget: PatternBudget): string | undefined => {
  const size = patternSize(pattern)
  if (size > MAX_PATTERN_SIZE) return `must expand to at most ${MAX_PATTERN_SIZE} RE2 steps (${sizeRule}); this one to about ${size}`
  if (size > budget.left) return `takes the patterns of the request past ${MAX_REQUEST_PATTERN_SIZE} RE2 steps in all (${sizeRule})`
  budget.left -= size
  return undefined
}

/** What one `format: "regex"` counts for in patternWork: its string is compiled, up to the largest pattern. */
const REGEX_FORMAT_WORK = MAX_PATTERN_SIZE

/**
 * Steps per character of a value the schema's regexes may take: the sizes of its patterns and
 * property-name patterns, and the most a `format: "regex"` string may compile to. Times the
 * length of the text, a bound on the regex work of one validation (ValidationLimits decides
 * where that runs).
 */
export const patternWork = (nodes: Iterable<Record<string, unknown>>): number => {
  let work = 0
  for (const node of nodes) {
    if (typeof node.pattern === "string") work += patternSize(node.pattern)
    const names = node.patternProperties
    if (typeof names === "object" && names !== null && !Array.isArray(names)) for (const name in names) work += patternSize(name)
    if (node.format === "regex") work += REGEX_FORMAT_WORK
  }
  return work
}
