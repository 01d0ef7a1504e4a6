/**
 * `uniqueItems` in linear time. @cfworker/json-schema compares every pair
 * of items, with no hook to replace a keyword, so a schema that holds
 * `uniqueItems` is compiled twice, whole and without the keyword, and a
 * pass before validation finds every array the keyword may apply to and
 * checks it by the canonical JSON of its items. Where all of them are
 * unique, the two schemas give the same verdict, so the one without the
 * keyword validates. Duplicates where the keyword applies unconditionally
 * make the value invalid whatever else holds; duplicates under `anyOf`,
 * `not`, `if` and the like are left to the library, on arrays small enough
 * for its pairwise check.
 */
import { dereference, ignoredKeyword, type OutputUnit, schemaArrayKeyword, schemaMapKeyword } from "@cfworker/json-schema"
import { compileLinear } from "./JsonSchemaCheck.ts"
import { findInSchema, isSchemaNode as isObject, type SchemaNode as Node } from "./SchemaWalk.ts"

/** Item comparisons the library's pairwise check may make (an array's length times its size). */
const PAIRWISE_BUDGET = 4_000_000

/**
 * JSON text this short (in characters) holds too few items for the library's pairwise check to
 * cost more than the pass does (a few hundred at most): such values skip the pass
 * (test/bench/toolValidation.ts, the agent call).
 */
export const PAIRWISE_TEXT = 1024

type Lookup = Record<string, unknown>

/** What the pass found, and so which schema validates. */
export type UniqueOutcome =
  /** Every array the keyword may apply to is unique: validate without it. */
  | { readonly kind: "unique" }
  /** Arrays the keyword always applies to hold duplicates: these errors, with those of the schema without it. */
  | { readonly kind: "duplicates"; readonly errors: ReadonlyArray<OutputUnit> }
  /** Duplicates where the keyword applies only conditionally: the whole schema decides. */
  | { readonly kind: "whole" }
  /** An array is over a bound: the value is refused with this error. */
  | { readonly kind: "refused"; readonly error: string }

/** Whether any schema node the library reaches holds a truthy `uniqueItems`. */
export const holdsUniqueItems = (schema: unknown): boolean => findInSchema(schema, (node) => (node.uniqueItems ? true : undefined)) === true

/** Whether a schema refers to its parts ($ref, $recursiveRef), so that a walk along it can meet a node twice or loop. */
const holdsRefs = (schema: unknown): boolean =>
  findInSchema(schema, (node) => (node.$ref !== undefined || node.$recursiveRef !== undefined ? true : undefined)) === true

/** A copy of the schema without `uniqueItems` (values the library never reads as schemas are shared). */
export const withoutUniqueItems = (schema: unknown): unknown => {
  const copy = (node: unknown): unknown => {
    if (!isObject(node)) return node
    const out: Node = {}
    for (const key in node) {
      if (key === "uniqueItems") continue
      const sub = node[key]
      if ((ignoredKeyword as Record<string, boolean>)[key]) out[key] = sub
      else if (Array.isArray(sub)) out[key] = (schemaArrayKeyword as Record<string, boolean>)[key] ? sub.map(copy) : sub
      else if ((schemaMapKeyword as Record<string, boolean>)[key] && isObject(sub)) {
        const map: Node = {}
        for (const name in sub) map[name] = copy(sub[name])
        out[key] = map
      } else out[key] = copy(sub)
    }
    return out
  }
  return copy(schema)
}

// --- canonical items --------------------------------------------------------------

/** A string equal for two values exactly when the library's deep comparison calls them equal. */
const canonical = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) {
    let out = "["
    for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + canonical(value[i])
    return out + "]"
  }
  const keys = Object.keys(value).sort()
  let out = "{"
  for (let i = 0; i < keys.length; i++) out += (i === 0 ? "" : ",") + JSON.stringify(keys[i]) + ":" + canonical((value as Node)[keys[i]!])
  return out + "}"
}

/**
 * The pair the library would report ("Duplicate items at indexes j and k":
 * the first item that has a twin, and its first twin), and the array's size
 * for the pairwise budget; undefined pair when the items are unique.
 */
const duplicateOf = (items: ReadonlyArray<unknown>): { readonly pair: readonly [number, number] | undefined; readonly size: number } => {
  if (items.length <= SMALL) return smallDuplicateOf(items)
  const first = new Map<unknown, number>()
  let second: Map<unknown, number> | undefined
  let size = 0
  for (let i = 0; i < items.length; i++) {
    const item = items[i]
    let key: unknown = item
    if (item !== null && typeof item === "object") {
      const text = canonical(item)
      size += text.length
      // A prefix keeps an object's text apart from an equal string item.
      key = `\u0000${text}`
    } else size += 1
    const seen = first.get(key)
    if (seen === undefined) first.set(key, i)
    else if (!(second ??= new Map()).has(key)) second.set(key, i)
  }
  if (second === undefined) return { pair: undefined, size }
  let pair: [number, number] | undefined
  for (const [key, k] of second) {
    const j = first.get(key)!
    if (pair === undefined || j < pair[0]) pair = [j, k]
  }
  return { pair, size }
}

/** Arrays this short are compared pair by pair, in the library's order: cheaper than a map. */
const SMALL = 16

const smallDuplicateOf = (items: ReadonlyArray<unknown>): { readonly pair: readonly [number, number] | undefined; readonly size: number } => {
  const keys: Array<unknown> = []
  let size = 0
  for (const item of items) {
    if (item !== null && typeof item === "object") {
      const text = canonical(item)
      size += text.length
      keys.push(`\u0000${text}`)
    } else {
      size += 1
      keys.push(item)
    }
  }
  for (let j = 0; j < keys.length; j++) {
    for (let k = 0; k < keys.length; k++) if (j !== k && keys[j] === keys[k]) return { pair: [j, k], size }
  }
  return { pair: undefined, size }
}

// --- the pass -----------------------------------------------------------------------

const pointerOf = (path: ReadonlyArray<string | number>): string =>
  path.length === 0 ? "#" : `#/${path.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`

interface Found {
  readonly path: ReadonlyArray<string | number>
  always: boolean
}

/**
 * The arrays `uniqueItems` may apply to in `instance`, each with whether it
 * always applies (reached only through keywords whose failure fails the
 * whole: properties, items, allOf, $ref ...). Over-approximates where it
 * cannot tell (anyOf, not, if, contains, unevaluated*, $recursiveRef).
 */
const arraysUnderUniqueItems = (schema: unknown, lookup: Lookup, oldRefs: boolean, refs: boolean, instance: unknown): Map<ReadonlyArray<unknown>, Found> => {
  const found = new Map<ReadonlyArray<unknown>, Found>()
  // Without $ref a schema is a tree: each node meets each value once at most, and nothing loops.
  const seenAlways = refs ? new Map<Node, Set<object>>() : undefined
  const seenMaybe = refs ? new Map<Node, Set<object>>() : undefined
  const path: Array<string | number> = []
  const mark = (items: ReadonlyArray<unknown>, always: boolean) => {
    const known = found.get(items)
    if (known === undefined) found.set(items, { path: [...path], always })
    else if (always) known.always = true
  }
  // Every array below a value, as maybe: for keywords whose reach cannot be followed statically.
  const markAll = (value: unknown): void => {
    if (value === null || typeof value !== "object") return
    if (Array.isArray(value)) {
      mark(value, false)
      value.forEach((item, i) => {
        path.push(i)
        markAll(item)
        path.pop()
      })
    } else {
      for (const key in value) {
        path.push(key)
        markAll((value as Node)[key])
        path.pop()
      }
    }
  }
  const child = (node: unknown, value: unknown, key: string | number, always: boolean) => {
    if (value === null || typeof value !== "object") return
    path.push(key)
    visit(node, value, always)
    path.pop()
  }
  const visit = (node: unknown, value: unknown, always: boolean): void => {
    // Only arrays and objects can be, or hold, an array.
    if (!isObject(node) || value === null || typeof value !== "object") return
    if (seenAlways !== undefined && seenMaybe !== undefined) {
      const seen = always ? seenAlways : seenMaybe
      let values = seen.get(node)
      if (values?.has(value) || (!always && seenAlways.get(node)?.has(value))) return
      if (values === undefined) seen.set(node, values = new Set())
      values.add(value)
    }
    if (node.$ref !== undefined) {
      visit(lookup[(node.__absolute_ref__ as string | undefined) ?? (node.$ref as string)], value, always)
      // Drafts 4 and 7 ignore a $ref's siblings.
      if (oldRefs) return
    }
    if (node.$recursiveRef !== undefined) markAll(value)
    if (node.not !== undefined) visit(node.not, value, false)
    for (const key of ["if", "then", "else"] as const) if (node[key] !== undefined) visit(node[key], value, false)
    for (const key of ["anyOf", "oneOf"] as const) {
      const list = node[key]
      if (Array.isArray(list)) for (const sub of list) visit(sub, value, false)
    }
    if (Array.isArray(node.allOf)) for (const sub of node.allOf) visit(sub, value, always)
    if (Array.isArray(value)) visitArray(node, value, always)
    else visitObject(node, value as Node, always)
  }
  const visitArray = (node: Node, items: ReadonlyArray<unknown>, always: boolean) => {
    if (node.uniqueItems) mark(items, always)
    let i = 0
    if (Array.isArray(node.prefixItems)) for (; i < Math.min(node.prefixItems.length, items.length); i++) child(node.prefixItems[i], items[i], i, always)
    if (node.items !== undefined) {
      if (Array.isArray(node.items)) for (; i < Math.min(node.items.length, items.length); i++) child(node.items[i], items[i], i, always)
      else for (; i < items.length; i++) child(node.items, items[i], i, always)
      if (node.additionalItems !== undefined) for (; i < items.length; i++) child(node.additionalItems, items[i], i, always)
    }
    for (const key of ["contains", "unevaluatedItems"] as const) {
      if (node[key] !== undefined) for (let j = 0; j < items.length; j++) child(node[key], items[j], j, false)
    }
  }
  const visitObject = (node: Node, value: Node, always: boolean) => {
    for (const key of ["dependentSchemas", "dependencies"] as const) {
      const map = node[key]
      if (!isObject(map)) continue
      for (const name in map) if (Object.hasOwn(value, name) && !Array.isArray(map[name])) visit(map[name], value, always)
    }
    // The keys properties and patternProperties took, which additionalProperties leaves alone.
    const evaluated = node.additionalProperties === undefined ? undefined : new Set<string>()
    if (isObject(node.properties)) {
      for (const name in node.properties) {
        if (!Object.hasOwn(value, name)) continue
        evaluated?.add(name)
        child(node.properties[name], value[name], name, always)
      }
    }
    if (isObject(node.patternProperties)) {
      for (const pattern in node.patternProperties) {
        const re = compileLinear(pattern, "u")
        for (const name in value) {
          if (!re.test(name)) continue
          evaluated?.add(name)
          child(node.patternProperties[pattern], value[name], name, always)
        }
      }
    }
    if (evaluated !== undefined) {
      for (const name in value) if (!evaluated.has(name)) child(node.additionalProperties, value[name], name, always)
    } else if (node.unevaluatedProperties !== undefined) {
      for (const name in value) child(node.unevaluatedProperties, value[name], name, false)
    }
  }
  visit(schema, instance, true)
  return found
}

/** One schema that holds `uniqueItems`: what the pass needs to decide between it and its copy without the keyword. */
export class UniqueItemsGuard {
  private readonly schema: unknown
  private readonly lookup: Lookup
  private readonly oldRefs: boolean
  private readonly refs: boolean

  constructor(schema: unknown, lookup: Lookup, draft: string) {
    this.schema = schema
    this.lookup = lookup
    this.oldRefs = draft === "4" || draft === "7"
    this.refs = holdsRefs(schema)
  }

  /** The guard for a schema, or undefined when it holds no `uniqueItems` (nothing to do). */
  static of(schema: unknown, draft: string): { readonly guard: UniqueItemsGuard; readonly stripped: unknown } | undefined {
    if (!holdsUniqueItems(schema)) return undefined
    return { guard: new UniqueItemsGuard(schema, dereference(schema as never), draft), stripped: withoutUniqueItems(schema) }
  }

  /** Checks every array the keyword may apply to; `maxItems` bounds their length. */
  check(instance: unknown, maxItems: number, setting: string): UniqueOutcome {
    const arrays = arraysUnderUniqueItems(this.schema, this.lookup, this.oldRefs, this.refs, instance)
    const errors: Array<OutputUnit> = []
    let conditional = false
    let pairwise = 0
    for (const [items, { always, path }] of arrays) {
      if (items.length > maxItems) {
        return { kind: "refused", error: `${where(path)}: has ${items.length} items; uniqueItems is checked on arrays of at most ${maxItems} (${setting})` }
      }
      const { pair, size } = duplicateOf(items)
      pairwise += items.length * size
      if (pair === undefined) continue
      if (always) {
        const instanceLocation = pointerOf(path)
        errors.push({ instanceLocation, keyword: "uniqueItems", keywordLocation: "#", error: `Duplicate items at indexes ${pair[0]} and ${pair[1]}.` })
      } else conditional = true
    }
    if (conditional) {
      if (pairwise > PAIRWISE_BUDGET) {
        const path = [...arrays].find(([items, f]) => !f.always && duplicateOf(items).pair !== undefined)![1].path
        return { kind: "refused", error: `${where(path)}: holds duplicate items where uniqueItems applies only under anyOf, oneOf, not, if or contains, which is checked only on smaller arrays` }
      }
      return { kind: "whole" }
    }
    return errors.length > 0 ? { kind: "duplicates", errors } : { kind: "unique" }
  }
}

const where = (path: ReadonlyArray<string | number>) => (path.length === 0 ? "value" : path.join("."))
