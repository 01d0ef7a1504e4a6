// @ts-check
/**
 * The API reference at `/docs`: a small renderer of whatever /openapi.json
 * says (endpoints, parameters, request and response schemas, statuses,
 * servers, security), with no CDN and no framework. Every string from the
 * document goes in through textContent.
 */
import { byId, el, setStatus } from "./dom.js"
import { apiKey, initKeyForm } from "./key.js"
import { errorDetail, keyHint, messageOf, readJson, request } from "./request.js"
import { anchor, schemaNode } from "./schema.js"

/** @typedef {import("./schema.js").Schema} Schema */
/**
 * A media type's entry; a stream documents each event's data and its end marker in x- extensions.
 * @typedef {Record<string, { schema?: Schema; "x-sse-data"?: Schema; "x-sse-end"?: string }>} Content
 */
/** @typedef {Array<Record<string, Array<string>>>} Security */
/** @typedef {{ name: string; in: string; required?: boolean; schema?: Schema; description?: string }} Parameter */
/**
 * @typedef {{
 *   operationId?: string; summary?: string; description?: string; tags?: Array<string>; security?: Security;
 *   parameters?: Array<Parameter>; requestBody?: { required?: boolean; content?: Content };
 *   responses?: Record<string, { description?: string; content?: Content }>
 * }} Operation
 */
/**
 * @typedef {{
 *   openapi?: string; info?: { title?: string; version?: string; description?: string; license?: { name?: string } };
 *   servers?: Array<{ url: string; description?: string }>; security?: Security; paths?: Record<string, Record<string, Operation>>;
 *   components?: { schemas?: Record<string, Schema>; securitySchemes?: Record<string, { type: string; scheme?: string }> }
 * }} OpenApiDocument
 */

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/**
 * A body's media types with their schemas.
 * @param {Content | undefined} content
 */
const contentNodes = (content) => {
  if (!content) return [el("span", { className: "meta", text: "no body" })]
  return Object.keys(content).map((type) => {
    const entry = content[type]
    const nodes = [el("code", { text: type }), schemaNode(entry.schema, 0)]
    const data = entry["x-sse-data"]
    const end = entry["x-sse-end"]
    if (data) nodes.push(el("div", null, ["each event's data: ", schemaNode(data, 0)]))
    if (end) nodes.push(el("div", null, ["last event: ", el("code", { text: `data: ${end}` })]))
    return el("div", null, nodes)
  })
}

/**
 * One operation: method and path, summary, auth, parameters, request body and responses.
 * @param {OpenApiDocument} doc
 * @param {string} path
 * @param {string} method
 * @param {Operation} op
 */
const operationNode = (doc, path, method, op) => {
  const id = anchor("op", op.operationId || method + path)
  const section = el("section", { className: "endpoint", id, "aria-labelledby": `${id}-h` }, [
    el("h3", { id: `${id}-h` }, [el("span", { className: "method", text: method.toUpperCase() }), " ", el("code", { text: path })])
  ])
  if (op.summary) section.appendChild(el("p", { text: op.summary }))
  if (op.description) section.appendChild(el("p", { className: "hint", text: op.description }))
  const security = op.security || doc.security || []
  const schemes = security.map((s) => Object.keys(s).join(" + ")).filter((s) => s !== "")
  section.appendChild(el("p", { className: "meta", text: schemes.length > 0 ? `Auth: ${schemes.join(" or ")}` : "Auth: none" }))
  const parameters = op.parameters || []
  if (parameters.length > 0) {
    section.appendChild(el("h4", { text: "Parameters" }))
    const table = el("table", null, [el("thead", null, [el("tr", null, ["Name", "In", "Required", "Schema"].map((h) => el("th", { scope: "col", text: h })))])])
    const body = el("tbody")
    for (const p of parameters) {
      body.appendChild(el("tr", null, [
        el("td", null, [el("code", { text: p.name })]),
        el("td", { text: p.in }),
        el("td", { text: p.required ? "yes" : "no" }),
        el("td", null, [schemaNode(p.schema, 0), p.description ? el("div", { className: "hint", text: p.description }) : null])
      ]))
    }
    table.appendChild(body)
    section.appendChild(table)
  }
  if (op.requestBody) {
    section.appendChild(el("h4", { text: `Request body${op.requestBody.required ? " (required)" : ""}` }))
    for (const node of contentNodes(op.requestBody.content)) section.appendChild(node)
  }
  const responses = op.responses || {}
  section.appendChild(el("h4", { text: "Responses" }))
  const rtable = el("table", null, [el("thead", null, [el("tr", null, ["Status", "Description", "Body"].map((h) => el("th", { scope: "col", text: h })))])])
  const rbody = el("tbody")
  for (const [status, response] of Object.entries(responses)) {
    rbody.appendChild(el("tr", null, [
      el("th", { scope: "row", text: status }),
      el("td", { text: response.description || "" }),
      el("td", null, contentNodes(response.content))
    ]))
  }
  rtable.appendChild(rbody)
  section.appendChild(rtable)
  return section
}

/**
 * The whole reference: info, servers, authentication, a contents list, the
 * operations grouped by their first tag, then the named schemas.
 * @param {OpenApiDocument} doc
 */
const render = (doc) => {
  const out = byId("docs-content")
  out.replaceChildren()
  const info = doc.info || {}
  out.appendChild(el("h2", { text: `${info.title || "API"} ${info.version || ""}` }))
  if (info.description) out.appendChild(el("p", { text: info.description }))
  if (info.license && info.license.name) out.appendChild(el("p", { className: "meta", text: `License: ${info.license.name}` }))
  if (Array.isArray(doc.servers) && doc.servers.length > 0) {
    out.appendChild(el("h3", { text: "Servers" }))
    out.appendChild(el("ul", null, doc.servers.map((s) => el("li", null, [el("code", { text: s.url }), s.description ? ` ${s.description}` : null]))))
  }
  const schemes = (doc.components && doc.components.securitySchemes) || {}
  if (Object.keys(schemes).length > 0) {
    out.appendChild(el("h3", { text: "Authentication" }))
    out.appendChild(el("ul", null, Object.entries(schemes).map(([name, s]) => {
      const what = s.type === "http" ? `HTTP ${s.scheme} (Authorization: ${s.scheme} <key>)` : s.type
      return el("li", null, [el("code", { text: name }), `: ${what}`])
    })))
  }

  /** @type {Map<string, Array<{ path: string; method: string; op: Operation }>>} */
  const groups = new Map()
  for (const [path, item] of Object.entries(doc.paths || {})) {
    for (const method of methods) {
      const op = item[method]
      if (!op) continue
      const tag = (op.tags && op.tags[0]) || "other"
      const group = groups.get(tag) ?? []
      if (group.length === 0) groups.set(tag, group)
      group.push({ path, method, op })
    }
  }
  const toc = el("nav", { "aria-label": "Endpoints" }, [el("h3", { text: "Endpoints" })])
  const tocList = el("ul")
  for (const entries of groups.values()) {
    for (const entry of entries) {
      tocList.appendChild(el("li", null, [el("a", {
        href: `#${anchor("op", entry.op.operationId || entry.method + entry.path)}`,
        text: `${entry.method.toUpperCase()} ${entry.path}`
      })]))
    }
  }
  toc.appendChild(tocList)
  out.appendChild(toc)
  for (const [tag, entries] of groups) {
    out.appendChild(el("h2", { text: tag }))
    for (const entry of entries) out.appendChild(operationNode(doc, entry.path, entry.method, entry.op))
  }
  const schemas = (doc.components && doc.components.schemas) || {}
  const names = Object.keys(schemas).sort()
  if (names.length > 0) {
    out.appendChild(el("h2", { text: "Schemas" }))
    for (const name of names) {
      const id = anchor("schema", name)
      out.appendChild(el("section", { className: "endpoint", id, "aria-labelledby": `${id}-h` }, [
        el("h3", { id: `${id}-h` }, [el("code", { text: name })]),
        schemaNode(schemas[name], 0)
      ]))
    }
  }
}

/** Fetches /openapi.json with the saved key and renders it, or says why it cannot. */
const load = async () => {
  if (apiKey() === "") {
    byId("docs-content").replaceChildren()
    setStatus("docs-status", "Enter an API key above: /openapi.json needs one.", true)
    return
  }
  setStatus("docs-status", "Loading /openapi.json…")
  try {
    const response = await request("GET", "/openapi.json")
    const body = /** @type {OpenApiDocument | null} */ (await readJson(response))
    if (!response.ok || !body || typeof body !== "object") {
      setStatus("docs-status", `Could not load /openapi.json: ${errorDetail(response.status, body)}${keyHint(response.status)}`, true)
      return
    }
    render(body)
    const count = document.querySelectorAll("section.endpoint h3 .method").length
    setStatus("docs-status", `OpenAPI ${body.openapi || ""}: ${count} operations.`)
    if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView()
  } catch (error) {
    setStatus("docs-status", `Could not load /openapi.json: ${messageOf(error)}`, true)
  }
}

initKeyForm(() => void load())
void load()
