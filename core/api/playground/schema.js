// @ts-check
/**
 * A JSON Schema shown as nested lists: type, rules, descriptions and fields.
 * The API reference renders OpenAPI's schemas with it, the MCP panel each
 * tool's input schema. Every string goes in through textContent.
 */
import { el } from "./dom.js"

/**
 * The parts of a JSON Schema the pages show.
 * @typedef {{
 *   $ref?: string; const?: unknown; enum?: Array<unknown>; type?: string | Array<string>; format?: string;
 *   description?: string; properties?: Record<string, Schema>; required?: Array<string>; items?: Schema;
 *   anyOf?: Array<Schema>; oneOf?: Array<Schema>; allOf?: Array<Schema>; additionalProperties?: boolean | Schema;
 *   minimum?: number; exclusiveMinimum?: number; maximum?: number; exclusiveMaximum?: number;
 *   minLength?: number; maxLength?: number; minItems?: number; maxItems?: number; pattern?: string; default?: unknown
 * }} Schema
 */

/**
 * An id fragment made of safe characters only.
 * @param {string} prefix
 * @param {string} name
 */
export const anchor = (prefix, name) => `${prefix}-${String(name).replace(/[^A-Za-z0-9_-]/g, "_")}`

/**
 * The schema's name when the reference points into components.schemas.
 * @param {unknown} ref
 */
const refName = (ref) => {
  const prefix = "#/components/schemas/"
  return typeof ref === "string" && ref.startsWith(prefix) ? decodeURIComponent(ref.slice(prefix.length)) : null
}

/** @param {unknown} value */
const json = (value) => JSON.stringify(value)

/**
 * The schema with its allOf parts folded in, and every description it gives: a
 * checked or annotated field often carries its rules and a description there.
 * @param {Schema} schema
 * @returns {{ schema: Schema; descriptions: Array<string> }}
 */
const folded = (schema) => {
  /** @type {Record<string, unknown>} */
  const out = { ...schema }
  delete out.allOf
  delete out.description
  const descriptions = typeof schema.description === "string" ? [schema.description] : []
  for (const part of Array.isArray(schema.allOf) ? schema.allOf : []) {
    if (!part || typeof part !== "object") continue
    for (const [key, value] of Object.entries(part)) {
      if (key === "description") {
        if (typeof value === "string" && !descriptions.includes(value)) descriptions.push(value)
      } else if (!(key in out)) out[key] = value
    }
  }
  return { schema: /** @type {Schema} */ (out), descriptions }
}

/**
 * What a schema is, in one line: type, format, enum, const.
 * @param {Schema | undefined} schema
 */
const typeOf = (schema) => {
  if (!schema || typeof schema !== "object") return "any"
  if (schema.$ref) return refName(schema.$ref) || schema.$ref
  if ("const" in schema) return `constant ${json(schema.const)}`
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map(json).join(", ")}`
  const type = Array.isArray(schema.type) ? schema.type.join(" or ") : schema.type
  if (type === "array") return "array"
  if (!type && (schema.anyOf || schema.oneOf)) return "one of"
  if (!type && schema.properties) return "object"
  return (type || "any") + (schema.format ? ` (${schema.format})` : "")
}

/**
 * Ranges, lengths, patterns and defaults a schema states.
 * @param {Schema | undefined} schema
 */
const rulesOf = (schema) => {
  /** @type {Array<string>} */
  const rules = []
  if (!schema || typeof schema !== "object") return rules
  if (schema.minimum !== undefined) rules.push(`≥ ${schema.minimum}`)
  if (schema.exclusiveMinimum !== undefined) rules.push(`> ${schema.exclusiveMinimum}`)
  if (schema.maximum !== undefined) rules.push(`≤ ${schema.maximum}`)
  if (schema.exclusiveMaximum !== undefined) rules.push(`< ${schema.exclusiveMaximum}`)
  if (schema.minLength !== undefined) rules.push(`length ≥ ${schema.minLength}`)
  if (schema.maxLength !== undefined) rules.push(`length ≤ ${schema.maxLength}`)
  if (schema.minItems !== undefined) rules.push(`items ≥ ${schema.minItems}`)
  if (schema.maxItems !== undefined) rules.push(`items ≤ ${schema.maxItems}`)
  if (schema.pattern !== undefined) rules.push(`pattern ${schema.pattern}`)
  if (schema.default !== undefined) rules.push(`default ${json(schema.default)}`)
  if (schema.additionalProperties === false) rules.push("no other fields")
  return rules
}

/**
 * A schema as nodes: its type (a link for a reference), rules, descriptions and nested fields.
 * @param {Schema | undefined} given
 * @param {number} depth
 * @returns {HTMLElement}
 */
export const schemaNode = (given, depth) => {
  const { schema, descriptions } = given && typeof given === "object" ? folded(given) : { schema: given, descriptions: [] }
  const box = el("div", { className: "schema" })
  const line = el("span")
  const name = schema && schema.$ref ? refName(schema.$ref) : null
  if (name !== null) line.appendChild(el("a", { href: `#${anchor("schema", name)}`, text: name }))
  else line.appendChild(document.createTextNode(typeOf(schema)))
  const rules = rulesOf(schema)
  if (rules.length > 0) line.appendChild(document.createTextNode(` · ${rules.join(", ")}`))
  box.appendChild(line)
  if (!schema || typeof schema !== "object" || name !== null) return box
  for (const description of descriptions) box.appendChild(el("div", { className: "hint", text: description }))
  if (depth > 8) return box
  if (schema.properties) box.appendChild(fieldsNode(schema.properties, schema.required, depth))
  if (schema.items) box.appendChild(el("ul", null, [el("li", null, ["items: ", schemaNode(schema.items, depth + 1)])]))
  const alternatives = schema.anyOf || schema.oneOf
  if (Array.isArray(alternatives)) {
    box.appendChild(el("ul", null, alternatives.map((alt) => el("li", null, [schemaNode(alt, depth + 1)]))))
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
    box.appendChild(el("ul", null, [el("li", null, ["other fields: ", schemaNode(schema.additionalProperties, depth + 1)])]))
  }
  return box
}

/**
 * An object schema's fields, each required or optional.
 * @param {Record<string, Schema>} properties
 * @param {Array<string> | undefined} required
 * @param {number} depth
 * @returns {HTMLElement}
 */
export const fieldsNode = (properties, required, depth) => {
  const mandatory = Array.isArray(required) ? required : []
  const list = el("ul")
  for (const key of Object.keys(properties)) {
    list.appendChild(el("li", null, [
      el("span", { className: "name", text: key }),
      " ",
      el("span", { className: "meta", text: mandatory.includes(key) ? "required" : "optional" }),
      ": ",
      schemaNode(properties[key], depth + 1)
    ]))
  }
  return list
}
