/**
 * The playground's browser code, served as /playground.js (the page's CSP
 * allows scripts from 'self' only, so there is no inline script). Plain
 * ES2020 in a string, no template literals: no bundler, no framework.
 * Everything from a response reaches the page through textContent or a
 * checked http(s) href/src, never as markup.
 */
import { domScript } from "./DomScript.ts"
import { keyScript } from "./KeyForm.ts"

export const playgroundScript = String.raw`"use strict";
` + domScript + keyScript + String.raw`
(function () {
  var $ = Dom.byId;
  var el = Dom.el;

  /** The URL if it is http(s), else null: result links never become javascript: or data: hrefs. */
  function safeUrl(value) {
    if (typeof value !== "string" || value === "") return null;
    try {
      var url = new URL(value, location.href);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (e) {
      return null;
    }
  }

  function link(text, url) {
    var href = safeUrl(url);
    return href === null ? el("span", { text: text }) : el("a", { href: href, rel: "noopener noreferrer", text: text });
  }

  function hostOf(url) {
    try { return new URL(url).host; } catch (e) { return url; }
  }

  /** Text with its http(s) URLs as links, as nodes. */
  function linkified(text) {
    var out = document.createDocumentFragment();
    var pattern = /https?:\/\/[^\s<>"')\]]+/g;
    var last = 0;
    var match;
    while ((match = pattern.exec(text)) !== null) {
      var url = match[0].replace(/[.,;:!?]+$/, "");
      if (match.index > last) out.appendChild(document.createTextNode(text.slice(last, match.index)));
      out.appendChild(link(url, url));
      last = match.index + url.length;
      pattern.lastIndex = last;
    }
    if (last < text.length) out.appendChild(document.createTextNode(text.slice(last)));
    return out;
  }

  function shellQuote(text) {
    return "'" + text.replace(/'/g, "'\\''") + "'";
  }

  /** The request as curl, with the key read from the environment, never the real key. */
  function curlOf(method, path, body, stream) {
    var lines = ["curl -sS" + (stream ? " -N" : "") + (method === "GET" ? "" : " -X " + method) + " " + shellQuote(location.origin + path)];
    lines.push("  -H \"Authorization: Bearer $PERISCOPE_API_KEY\"");
    if (body !== undefined) {
      lines.push("  -H 'Content-Type: application/json'");
      lines.push("  -d " + shellQuote(JSON.stringify(body)));
    }
    return lines.join(" \\\n");
  }

  function showCode(id, text) {
    var box = $(id);
    box.querySelector("code").textContent = text;
    box.hidden = false;
  }

  function setStatus(id, text, bad) {
    var status = $(id);
    status.textContent = text;
    status.classList.toggle("bad", !!bad);
  }

  function request(method, path, body, signal) {
    var headers = {};
    var key = Key.get();
    if (key) headers.Authorization = "Bearer " + key;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return fetch(path, {
      method: method,
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: signal
    });
  }

  /** The message of either wire family's error body (search envelope or OpenAI error). */
  function errorMessage(status, json) {
    var text = "HTTP " + status;
    if (json && json.error && typeof json.error.message === "string") text = json.error.message;
    else if (json && json.exception && typeof json.exception.detail === "string") text = json.exception.detail;
    else if (json && typeof json.message === "string") text = json.message;
    if (status === 401) text += " (check the API key above)";
    return "Error " + status + ": " + text;
  }

  async function readJson(response) {
    try { return await response.json(); } catch (e) { return null; }
  }

  function needKey(statusId) {
    if (Key.get() !== "") return false;
    setStatus(statusId, "Enter an API key above first.", true);
    $("api-key").focus();
    return true;
  }

  function numberOf(input) {
    var value = input.value.trim();
    return value === "" ? undefined : Number(value);
  }

  function elapsed(started) {
    var ms = performance.now() - started;
    return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(1) + " s";
  }

  // --- tabs --------------------------------------------------------------------

  var tabs = ["search", "images", "chat"];

  function selectTab(name, focus) {
    tabs.forEach(function (other) {
      var tab = $("tab-" + other);
      var selected = other === name;
      tab.setAttribute("aria-selected", selected ? "true" : "false");
      tab.tabIndex = selected ? 0 : -1;
      $("panel-" + other).hidden = !selected;
    });
    if (focus) $("tab-" + name).focus();
    if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
  }

  tabs.forEach(function (name, index) {
    var tab = $("tab-" + name);
    tab.addEventListener("click", function () { selectTab(name, false); });
    tab.addEventListener("keydown", function (event) {
      var next = null;
      if (event.key === "ArrowRight") next = tabs[(index + 1) % tabs.length];
      else if (event.key === "ArrowLeft") next = tabs[(index + tabs.length - 1) % tabs.length];
      else if (event.key === "Home") next = tabs[0];
      else if (event.key === "End") next = tabs[tabs.length - 1];
      if (next !== null) {
        event.preventDefault();
        selectTab(next, true);
      }
    });
  });

  // --- web search --------------------------------------------------------------

  function webResult(result) {
    var title = result.title || result.link;
    var meta = el("p", { className: "meta" }, ["#" + result.position + " · "]);
    if (result.date) meta.appendChild(el("time", { datetime: result.date, text: result.date }));
    else meta.appendChild(document.createTextNode("no date"));
    return el("li", null, [
      el("h3", null, [link(title, result.link)]),
      el("div", { className: "url", text: result.link }),
      meta,
      el("p", { className: "snippet", text: result.snippet })
    ]);
  }

  $("search-form").addEventListener("submit", async function (event) {
    event.preventDefault();
    if (needKey("search-status")) return;
    var body = { keywords: $("search-keywords").value, num: numberOf($("search-num")) };
    var freshness = $("search-freshness").value;
    if (freshness) body.freshness = freshness;
    showCode("search-curl", curlOf("POST", "/api/search/webSearch", body, false));
    var list = $("search-results");
    list.replaceChildren();
    list.setAttribute("aria-busy", "true");
    setStatus("search-status", "Searching…");
    var started = performance.now();
    try {
      var response = await request("POST", "/api/search/webSearch", body);
      var json = await readJson(response);
      if (!response.ok || !json || !json.data) {
        setStatus("search-status", errorMessage(response.status, json), true);
        return;
      }
      json.data.organic.forEach(function (result) { list.appendChild(webResult(result)); });
      showCode("search-json", JSON.stringify(json, null, 2));
      var count = json.data.organic.length;
      setStatus("search-status", count + (count === 1 ? " result" : " results") + " for \u201c" + json.data.query + "\u201d in " + elapsed(started) + ".");
    } catch (error) {
      setStatus("search-status", "Request failed: " + error.message, true);
    } finally {
      list.removeAttribute("aria-busy");
    }
  });

  // --- image search ------------------------------------------------------------

  function imageResult(result) {
    var src = safeUrl(result.url);
    if (src === null) return null;
    var caption = result.title || hostOf(result.refUrl || result.url);
    var image = el("img", {
      src: src,
      alt: result.title || "Image from " + hostOf(result.refUrl || result.url),
      loading: "lazy",
      decoding: "async",
      referrerpolicy: "no-referrer",
      width: typeof result.width === "number" ? String(result.width) : null,
      height: typeof result.height === "number" ? String(result.height) : null
    });
    return el("li", null, [
      el("figure", null, [
        image,
        el("figcaption", null, [caption, el("br"), link("Source: " + hostOf(result.refUrl), result.refUrl)])
      ])
    ]);
  }

  $("images-form").addEventListener("submit", async function (event) {
    event.preventDefault();
    if (needKey("images-status")) return;
    var body = { keywords: $("images-keywords").value, num: numberOf($("images-num")) };
    showCode("images-curl", curlOf("POST", "/api/search/imageSearch", body, false));
    var grid = $("images-results");
    grid.replaceChildren();
    setStatus("images-status", "Searching…");
    var started = performance.now();
    try {
      var response = await request("POST", "/api/search/imageSearch", body);
      var json = await readJson(response);
      if (!response.ok || !json || !Array.isArray(json.data)) {
        setStatus("images-status", errorMessage(response.status, json), true);
        return;
      }
      json.data.forEach(function (result) {
        var item = imageResult(result);
        if (item !== null) grid.appendChild(item);
      });
      var count = json.data.length;
      setStatus("images-status", count + (count === 1 ? " image" : " images") + " in " + elapsed(started) + ".");
    } catch (error) {
      setStatus("images-status", "Request failed: " + error.message, true);
    }
  });

  // --- chat --------------------------------------------------------------------

  var conversation = [];
  var running = null;

  async function loadModels() {
    var select = $("chat-model");
    if (Key.get() === "") {
      select.replaceChildren(el("option", { value: "", text: "(enter a key to list models)" }));
      return;
    }
    try {
      var response = await request("GET", "/v1/models");
      var json = await readJson(response);
      if (!response.ok || !json || !Array.isArray(json.data)) {
        setStatus("chat-status", "Models: " + errorMessage(response.status, json), true);
        return;
      }
      var previous = select.value;
      select.replaceChildren();
      json.data.forEach(function (model) { select.appendChild(el("option", { value: model.id, text: model.id })); });
      if (previous && json.data.some(function (m) { return m.id === previous; })) select.value = previous;
      setStatus("chat-status", json.data.length + " models available.");
    } catch (error) {
      setStatus("chat-status", "Models: request failed: " + error.message, true);
    }
  }

  function heading(text) { return el("h4", { text: text }); }

  /** One assistant answer, filled as chunks arrive. */
  function assistantTurn(model) {
    var reasoningText = document.createTextNode("");
    var contentText = document.createTextNode("");
    var reasoning = el("details", { open: "" }, [el("summary", { text: "Reasoning" }), el("p", { className: "reasoning" }, [reasoningText])]);
    reasoning.hidden = true;
    var content = el("p", { className: "content" }, [contentText]);
    var tools = el("div");
    var citations = el("div");
    var meta = el("p", { className: "meta" });
    var title = el("h3", { text: "Assistant · " + model });
    var root = el("article", { className: "turn assistant", "aria-label": "Assistant answer" }, [title, reasoning, content, tools, citations, meta]);
    var calls = [];
    var sources = [];
    var seen = {};
    var state = { content: "", finish: null, usage: null, model: model };

    function renderTools() {
      tools.replaceChildren();
      if (calls.length === 0) return;
      var list = el("ul");
      calls.forEach(function (call) {
        if (!call) return;
        var args = call.arguments;
        try { args = JSON.stringify(JSON.parse(args), null, 2); } catch (e) { /* partial or invalid JSON: as sent */ }
        list.appendChild(el("li", null, [el("code", { text: call.name || "(unnamed)" }), el("pre", { text: args })]));
      });
      tools.appendChild(heading("Tool calls"));
      tools.appendChild(list);
    }

    function addSource(url, title, date, snippet) {
      var href = safeUrl(url);
      if (href === null || seen[href]) return;
      seen[href] = true;
      sources.push({ url: href, title: title || href, date: date, snippet: snippet });
      citations.replaceChildren(heading("Sources"));
      var list = el("ol");
      sources.forEach(function (source) {
        var item = el("li", null, [link(source.title, source.url)]);
        if (source.date) item.appendChild(el("span", { className: "meta", text: " · " + source.date }));
        if (source.snippet) item.appendChild(el("div", { className: "meta", text: source.snippet }));
        list.appendChild(item);
      });
      citations.appendChild(list);
    }

    function addCitations(holder) {
      if (!holder) return;
      if (Array.isArray(holder.annotations)) {
        holder.annotations.forEach(function (a) {
          if (a && a.type === "url_citation" && a.url_citation) addSource(a.url_citation.url, a.url_citation.title);
        });
      }
      if (Array.isArray(holder.search_results)) {
        holder.search_results.forEach(function (r) { if (r) addSource(r.url || r.link, r.title, r.date, r.snippet); });
      }
      if (Array.isArray(holder.citations)) {
        holder.citations.forEach(function (url) { if (typeof url === "string") addSource(url, url); });
      }
    }

    function chunk(data) {
      if (typeof data.model === "string" && data.model !== state.model) {
        state.model = data.model;
        title.textContent = "Assistant · " + data.model;
      }
      addCitations(data);
      (data.choices || []).forEach(function (choice) {
        if (choice.index !== 0) return;
        var delta = choice.delta || choice.message || {};
        if (typeof delta.reasoning_content === "string" && delta.reasoning_content !== "") {
          reasoning.hidden = false;
          reasoningText.appendData(delta.reasoning_content);
        }
        if (typeof delta.content === "string") {
          state.content += delta.content;
          contentText.appendData(delta.content);
        }
        if (Array.isArray(delta.tool_calls)) {
          delta.tool_calls.forEach(function (tc) {
            var at = typeof tc.index === "number" ? tc.index : calls.length;
            var call = calls[at] || (calls[at] = { id: "", name: "", arguments: "" });
            if (tc.id) call.id = tc.id;
            if (tc.function && tc.function.name) call.name += tc.function.name;
            if (tc.function && tc.function.arguments) call.arguments += tc.function.arguments;
          });
          renderTools();
        }
        addCitations(delta);
        if (choice.finish_reason) state.finish = choice.finish_reason;
      });
      if (data.usage) state.usage = data.usage;
    }

    function fail(text) {
      root.appendChild(el("p", { className: "error", role: "alert", text: text }));
    }

    function finish(summary) {
      if (state.content !== "") content.replaceChildren(linkified(state.content));
      else if (calls.length > 0 || state.finish === null) content.hidden = true;
      var parts = [];
      if (state.finish) parts.push("finish: " + state.finish);
      if (state.usage) parts.push(state.usage.prompt_tokens + " prompt + " + state.usage.completion_tokens + " completion tokens");
      parts.push(summary);
      meta.textContent = parts.join(" · ");
    }

    return { root: root, chunk: chunk, fail: fail, finish: finish, state: state };
  }

  /** Reads an SSE body: calls onData with each event's data; true when it ended with [DONE]. */
  async function readEvents(body, onData) {
    var reader = body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    for (;;) {
      var part = await reader.read();
      if (part.done) break;
      buffer += decoder.decode(part.value, { stream: true });
      var events = buffer.split(/\r?\n\r?\n/);
      buffer = events.pop();
      for (var i = 0; i < events.length; i++) {
        var data = events[i].split(/\r?\n/)
          .filter(function (line) { return line.indexOf("data:") === 0; })
          .map(function (line) { return line.slice(5).replace(/^ /, ""); })
          .join("\n");
        if (data === "") continue;
        if (data === "[DONE]") return true;
        onData(data);
      }
    }
    return false;
  }

  function parseTools() {
    var text = $("chat-tools").value.trim();
    if (text === "") return undefined;
    var tools = JSON.parse(text);
    if (!Array.isArray(tools)) throw new Error("tools: must be a JSON array");
    return tools;
  }

  $("chat-form").addEventListener("submit", async function (event) {
    event.preventDefault();
    if (running !== null) return;
    if (needKey("chat-status")) return;
    var text = $("chat-input").value.trim();
    if (text === "") {
      setStatus("chat-status", "Write a message first.", true);
      $("chat-input").focus();
      return;
    }
    var tools;
    try {
      tools = parseTools();
    } catch (error) {
      setStatus("chat-status", "Tools: not valid JSON: " + error.message, true);
      $("chat-tools").focus();
      return;
    }
    var model = $("chat-model").value;
    var messages = [];
    var system = $("chat-system").value.trim();
    if (system) messages.push({ role: "system", content: system });
    var user = { role: "user", content: text };
    messages = messages.concat(conversation, [user]);
    var body = { model: model || undefined, messages: messages, stream: true };
    var temperature = numberOf($("chat-temperature"));
    if (temperature !== undefined) body.temperature = temperature;
    var maxTokens = numberOf($("chat-max-tokens"));
    if (maxTokens !== undefined) body.max_tokens = maxTokens;
    if (tools !== undefined) body.tools = tools;
    var webSearch = $("chat-web-search").value;
    if (webSearch) body.web_search_options = { search_context_size: webSearch };
    showCode("chat-curl", curlOf("POST", "/v1/chat/completions", body, true));

    var transcript = $("chat-transcript");
    transcript.appendChild(el("article", { className: "turn user", "aria-label": "Your message" }, [
      el("h3", { text: "You" }),
      el("p", { className: "content", text: text })
    ]));
    var turn = assistantTurn(model || "default model");
    transcript.appendChild(turn.root);
    transcript.setAttribute("aria-busy", "true");
    $("chat-input").value = "";
    var controller = new AbortController();
    running = controller;
    $("chat-send").disabled = true;
    $("chat-stop").disabled = false;
    setStatus("chat-status", "Streaming…");
    var started = performance.now();
    try {
      var response = await request("POST", "/v1/chat/completions", body, controller.signal);
      if (!response.ok) {
        var json = await readJson(response);
        turn.fail(errorMessage(response.status, json));
        turn.finish(elapsed(started));
        setStatus("chat-status", "The request was refused.", true);
        $("chat-input").value = text;
        return;
      }
      var failed = false;
      var done = await readEvents(response.body, function (data) {
        var parsed;
        try { parsed = JSON.parse(data); } catch (e) { return; }
        if (parsed && parsed.error) {
          failed = true;
          turn.fail("Stream failed: " + (parsed.error.message || "unknown error"));
          return;
        }
        turn.chunk(parsed);
      });
      if (!done && !failed) {
        failed = true;
        turn.fail("The stream ended without data: [DONE]: the answer may be cut.");
      }
      turn.finish(elapsed(started));
      // A broken-off answer stays out of the conversation: the next request starts from the last whole one.
      if (!failed) {
        conversation.push(user);
        if (turn.state.content !== "") conversation.push({ role: "assistant", content: turn.state.content });
      }
      setStatus("chat-status", failed ? "The answer failed mid-stream." : "Answer complete.", failed);
    } catch (error) {
      if (error && error.name === "AbortError") {
        turn.finish("stopped after " + elapsed(started));
        setStatus("chat-status", "Stopped.");
      } else {
        turn.fail("Request failed: " + error.message);
        setStatus("chat-status", "Request failed.", true);
      }
    } finally {
      running = null;
      transcript.removeAttribute("aria-busy");
      $("chat-send").disabled = false;
      $("chat-stop").disabled = true;
    }
  });

  $("chat-input").addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $("chat-form").requestSubmit();
    }
  });

  $("chat-stop").addEventListener("click", function () {
    if (running !== null) running.abort();
    $("chat-input").focus();
  });

  $("chat-clear").addEventListener("click", function () {
    if (running !== null) running.abort();
    conversation = [];
    $("chat-transcript").replaceChildren();
    setStatus("chat-status", "New conversation.");
    $("chat-input").focus();
  });

  // --- start -------------------------------------------------------------------

  Key.init(function () { loadModels(); });
  var initial = location.hash.slice(1);
  selectTab(tabs.indexOf(initial) === -1 ? "search" : initial, false);
  loadModels();
})();
`
