/**
 * The API reference's browser code, served as /docs.js: a small renderer of
 * whatever /openapi.json says (endpoints, parameters, request and response
 * schemas, statuses, servers, security), with no CDN and no framework.
 * Every string from the document goes in through textContent.
 */
import { domScript } from "./DomScript.ts"
import { keyScript } from "./KeyForm.ts"

export const apiDocsScript = String.raw`"use strict";
` + domScript + keyScript + String.raw`
(function () {
  var $ = Dom.byId;
  var el = Dom.el;

  function setStatus(text, bad) {
    var status = $("docs-status");
    status.textContent = text;
    status.classList.toggle("bad", !!bad);
  }

  /** An id fragment made of safe characters only. */
  function anchor(prefix, name) {
    return prefix + "-" + String(name).replace(/[^A-Za-z0-9_-]/g, "_");
  }

  function refName(ref) {
    var prefix = "#/components/schemas/";
    return typeof ref === "string" && ref.indexOf(prefix) === 0 ? decodeURIComponent(ref.slice(prefix.length)) : null;
  }

  function json(value) { return JSON.stringify(value); }

  /** What a schema is, in one line: type, format, enum, const. */
  function typeOf(schema) {
    if (!schema || typeof schema !== "object") return "any";
    if (schema.$ref) return refName(schema.$ref) || schema.$ref;
    if ("const" in schema) return "constant " + json(schema.const);
    if (Array.isArray(schema.enum)) return "one of " + schema.enum.map(json).join(", ");
    var type = Array.isArray(schema.type) ? schema.type.join(" or ") : schema.type;
    if (type === "array") return "array";
    if (!type && (schema.anyOf || schema.oneOf)) return "one of";
    if (!type && schema.properties) return "object";
    return (type || "any") + (schema.format ? " (" + schema.format + ")" : "");
  }

  /** Ranges, lengths, patterns and defaults a schema states. */
  function rulesOf(schema) {
    var rules = [];
    if (!schema || typeof schema !== "object") return rules;
    if (schema.minimum !== undefined) rules.push("≥ " + schema.minimum);
    if (schema.exclusiveMinimum !== undefined) rules.push("> " + schema.exclusiveMinimum);
    if (schema.maximum !== undefined) rules.push("≤ " + schema.maximum);
    if (schema.exclusiveMaximum !== undefined) rules.push("< " + schema.exclusiveMaximum);
    if (schema.minLength !== undefined) rules.push("length ≥ " + schema.minLength);
    if (schema.maxLength !== undefined) rules.push("length ≤ " + schema.maxLength);
    if (schema.minItems !== undefined) rules.push("items ≥ " + schema.minItems);
    if (schema.maxItems !== undefined) rules.push("items ≤ " + schema.maxItems);
    if (schema.pattern !== undefined) rules.push("pattern " + schema.pattern);
    if (schema["default"] !== undefined) rules.push("default " + json(schema["default"]));
    if (schema.additionalProperties === false) rules.push("no other fields");
    return rules;
  }

  /** A schema as nodes: its type (a link for a reference), rules, description and nested fields. */
  function schemaNode(schema, depth) {
    var box = el("div", { className: "schema" });
    var line = el("span");
    var name = schema && schema.$ref ? refName(schema.$ref) : null;
    if (name !== null) line.appendChild(el("a", { href: "#" + anchor("schema", name), text: name }));
    else line.appendChild(document.createTextNode(typeOf(schema)));
    var rules = rulesOf(schema);
    if (rules.length > 0) line.appendChild(document.createTextNode(" · " + rules.join(", ")));
    box.appendChild(line);
    if (!schema || typeof schema !== "object" || name !== null) return box;
    if (schema.description) box.appendChild(el("div", { className: "hint", text: schema.description }));
    if (depth > 8) return box;
    if (schema.properties) box.appendChild(fieldsNode(schema, depth));
    if (schema.items) box.appendChild(el("ul", null, [el("li", null, ["items: ", schemaNode(schema.items, depth + 1)])]));
    var alternatives = schema.anyOf || schema.oneOf;
    if (Array.isArray(alternatives)) {
      box.appendChild(el("ul", null, alternatives.map(function (alt) { return el("li", null, [schemaNode(alt, depth + 1)]); })));
    }
    if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      box.appendChild(el("ul", null, [el("li", null, ["other fields: ", schemaNode(schema.additionalProperties, depth + 1)])]));
    }
    return box;
  }

  function fieldsNode(schema, depth) {
    var required = Array.isArray(schema.required) ? schema.required : [];
    var list = el("ul");
    Object.keys(schema.properties).forEach(function (key) {
      var item = el("li", null, [
        el("span", { className: "name", text: key }),
        " ",
        el("span", { className: "meta", text: required.indexOf(key) === -1 ? "optional" : "required" }),
        ": ",
        schemaNode(schema.properties[key], depth + 1)
      ]);
      list.appendChild(item);
    });
    return list;
  }

  function contentNodes(content) {
    if (!content) return [el("span", { className: "meta", text: "no body" })];
    return Object.keys(content).map(function (type) {
      var nodes = [el("code", { text: type }), schemaNode(content[type].schema, 0)];
      // A stream documents each event's data and its end marker in x- extensions (OpenApiDocument.ts).
      if (content[type]["x-sse-data"]) nodes.push(el("div", null, ["each event's data: ", schemaNode(content[type]["x-sse-data"], 0)]));
      if (content[type]["x-sse-end"]) nodes.push(el("div", null, ["last event: ", el("code", { text: "data: " + content[type]["x-sse-end"] })]));
      return el("div", null, nodes);
    });
  }

  function operationNode(path, method, op) {
    var id = anchor("op", op.operationId || method + path);
    var section = el("section", { className: "endpoint", id: id, "aria-labelledby": id + "-h" }, [
      el("h3", { id: id + "-h" }, [el("span", { className: "method", text: method.toUpperCase() }), " ", el("code", { text: path })])
    ]);
    if (op.summary) section.appendChild(el("p", { text: op.summary }));
    if (op.description) section.appendChild(el("p", { className: "hint", text: op.description }));
    var security = op.security || doc.security || [];
    var schemes = security.map(function (s) { return Object.keys(s).join(" + "); }).filter(function (s) { return s !== ""; });
    section.appendChild(el("p", { className: "meta", text: schemes.length > 0 ? "Auth: " + schemes.join(" or ") : "Auth: none" }));
    var parameters = op.parameters || [];
    if (parameters.length > 0) {
      section.appendChild(el("h4", { text: "Parameters" }));
      var table = el("table", null, [el("thead", null, [el("tr", null, ["Name", "In", "Required", "Schema"].map(function (h) { return el("th", { scope: "col", text: h }); }))])]);
      var body = el("tbody");
      parameters.forEach(function (p) {
        body.appendChild(el("tr", null, [
          el("td", null, [el("code", { text: p.name })]),
          el("td", { text: p["in"] }),
          el("td", { text: p.required ? "yes" : "no" }),
          el("td", null, [schemaNode(p.schema, 0), p.description ? el("div", { className: "hint", text: p.description }) : null])
        ]));
      });
      table.appendChild(body);
      section.appendChild(table);
    }
    if (op.requestBody) {
      section.appendChild(el("h4", { text: "Request body" + (op.requestBody.required ? " (required)" : "") }));
      contentNodes(op.requestBody.content).forEach(function (node) { section.appendChild(node); });
    }
    var responses = op.responses || {};
    section.appendChild(el("h4", { text: "Responses" }));
    var rtable = el("table", null, [el("thead", null, [el("tr", null, ["Status", "Description", "Body"].map(function (h) { return el("th", { scope: "col", text: h }); }))])]);
    var rbody = el("tbody");
    Object.keys(responses).forEach(function (status) {
      var response = responses[status];
      rbody.appendChild(el("tr", null, [
        el("th", { scope: "row", text: status }),
        el("td", { text: response.description || "" }),
        el("td", null, contentNodes(response.content))
      ]));
    });
    rtable.appendChild(rbody);
    section.appendChild(rtable);
    return section;
  }

  var doc = null;

  function render(document_) {
    doc = document_;
    var out = $("docs-content");
    out.replaceChildren();
    var info = doc.info || {};
    out.appendChild(el("h2", { text: (info.title || "API") + " " + (info.version || "") }));
    if (info.description) out.appendChild(el("p", { text: info.description }));
    if (info.license && info.license.name) out.appendChild(el("p", { className: "meta", text: "License: " + info.license.name }));
    if (Array.isArray(doc.servers) && doc.servers.length > 0) {
      out.appendChild(el("h3", { text: "Servers" }));
      out.appendChild(el("ul", null, doc.servers.map(function (s) {
        return el("li", null, [el("code", { text: s.url }), s.description ? " " + s.description : null]);
      })));
    }
    var schemes = (doc.components && doc.components.securitySchemes) || {};
    if (Object.keys(schemes).length > 0) {
      out.appendChild(el("h3", { text: "Authentication" }));
      out.appendChild(el("ul", null, Object.keys(schemes).map(function (name) {
        var s = schemes[name];
        var what = s.type === "http" ? "HTTP " + s.scheme + " (Authorization: " + s.scheme + " <key>)" : s.type;
        return el("li", null, [el("code", { text: name }), ": " + what]);
      })));
    }

    // Contents, then operations grouped by their first tag.
    var groups = {};
    var order = [];
    Object.keys(doc.paths || {}).forEach(function (path) {
      var item = doc.paths[path];
      ["get", "put", "post", "delete", "options", "head", "patch", "trace"].forEach(function (method) {
        var op = item[method];
        if (!op) return;
        var tag = (op.tags && op.tags[0]) || "other";
        if (!groups[tag]) { groups[tag] = []; order.push(tag); }
        groups[tag].push({ path: path, method: method, op: op });
      });
    });
    var toc = el("nav", { "aria-label": "Endpoints" }, [el("h3", { text: "Endpoints" })]);
    var tocList = el("ul");
    order.forEach(function (tag) {
      groups[tag].forEach(function (entry) {
        tocList.appendChild(el("li", null, [el("a", {
          href: "#" + anchor("op", entry.op.operationId || entry.method + entry.path),
          text: entry.method.toUpperCase() + " " + entry.path
        })]));
      });
    });
    toc.appendChild(tocList);
    out.appendChild(toc);
    order.forEach(function (tag) {
      out.appendChild(el("h2", { text: tag }));
      groups[tag].forEach(function (entry) { out.appendChild(operationNode(entry.path, entry.method, entry.op)); });
    });
    var schemas = (doc.components && doc.components.schemas) || {};
    var names = Object.keys(schemas).sort();
    if (names.length > 0) {
      out.appendChild(el("h2", { text: "Schemas" }));
      names.forEach(function (name) {
        var id = anchor("schema", name);
        out.appendChild(el("section", { className: "endpoint", id: id, "aria-labelledby": id + "-h" }, [
          el("h3", { id: id + "-h" }, [el("code", { text: name })]),
          schemaNode(schemas[name], 0)
        ]));
      });
    }
  }

  async function load() {
    var key = Key.get();
    if (key === "") {
      $("docs-content").replaceChildren();
      setStatus("Enter an API key above: /openapi.json needs one.", true);
      return;
    }
    setStatus("Loading /openapi.json…");
    try {
      var response = await fetch("/openapi.json", { headers: { Authorization: "Bearer " + key } });
      var body = null;
      try { body = await response.json(); } catch (e) { /* not JSON */ }
      if (!response.ok || !body || typeof body !== "object") {
        var message = body && body.error && body.error.message ? body.error.message
          : body && body.exception && body.exception.detail ? body.exception.detail : "HTTP " + response.status;
        setStatus("Could not load /openapi.json: " + message + (response.status === 401 ? " (check the API key above)" : ""), true);
        return;
      }
      render(body);
      var count = document.querySelectorAll("section.endpoint h3 .method").length;
      setStatus("OpenAPI " + (body.openapi || "") + ": " + count + " operations.");
      if (location.hash) {
        var target = document.getElementById(location.hash.slice(1));
        if (target) target.scrollIntoView();
      }
    } catch (error) {
      setStatus("Could not load /openapi.json: " + error.message, true);
    }
  }

  Key.init(function () { load(); });
  load();
})();
`
