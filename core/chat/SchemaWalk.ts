/**
 * The parts of a JSON Schema that @cfworker/json-schema reads as schemas,
 * walked the way its `dereference` walks them (every keyword it does not
 * ignore, so that a `$ref` into an unknown keyword is covered too): the one
 * traversal the checks that must see what the validator will see share.
 *
 * No runtime import of effect here: job threads load this module.
 */
import { ignoredKeyword, schemaArrayKeyword, schemaMapKeyword } from "@cfworker/json-schema"

export type SchemaNode = Record<string, unknown>

export const isSchemaNode = (value: unknown): value is SchemaNode => typeof value === "object" && value !== null && !Array.isArray(value)

const escape = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1")

/** Calls `visit` on each subschema of a schema node, with its JSON Pointer relative to the node. */
export const eachSubschema = (node: SchemaNode, visit: (sub: unknown, pointer: string) => void): void => {
  for (const key in node) {
    if ((ignoredKeyword as Record<string, boolean>)[key]) continue
    const sub = node[key]
    if (Array.isArray(sub)) {
      if ((schemaArrayKeyword as Record<string, boolean>)[key]) sub.forEach((item, i) => visit(item, `/${escape(key)}/${i}`))
    } else if ((schemaMapKeyword as Record<string, boolean>)[key]) {
      if (isSchemaNode(sub)) for (const name in sub) visit(sub[name], `/${escape(key)}/${escape(name)}`)
    } else visit(sub, `/${escape(key)}`)
  }
}

/** Every schema node of a schema, with its JSON Pointer, until `visit` returns something. */
export const findInSchema = <A>(schema: unknown, visit: (node: SchemaNode, pointer: string) => A | undefined): A | undefined => {
  let found: A | undefined
  const walk = (node: unknown, pointer: string): void => {
    if (found !== undefined || !isSchemaNode(node)) return
    found = visit(node, pointer)
    if (found === undefined) eachSubschema(node, (sub, suffix) => walk(sub, pointer + suffix))
  }
  walk(schema, "")
  return found
}
