/**
 * The playground's markup, served at `/`. Static: everything that comes
 * from the API is added by /playground.js with DOM methods and textContent,
 * never as markup.
 */
import { keyForm } from "./KeyForm.ts"

export const playgroundPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Periscope playground</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/playground.css">
<script src="/playground.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <h1>Periscope playground</h1>
  <nav aria-label="Site">
    <ul>
      <li><a href="/" aria-current="page">Playground</a></li>
      <li><a href="/docs">API reference</a></li>
    </ul>
  </nav>
${keyForm}
</header>
<main id="main" tabindex="-1">
  <div role="tablist" aria-label="Try an endpoint">
    <button type="button" role="tab" id="tab-search" aria-controls="panel-search" aria-selected="true">Web search</button>
    <button type="button" role="tab" id="tab-images" aria-controls="panel-images" aria-selected="false" tabindex="-1">Images</button>
    <button type="button" role="tab" id="tab-chat" aria-controls="panel-chat" aria-selected="false" tabindex="-1">Chat</button>
  </div>

  <section role="tabpanel" id="panel-search" aria-labelledby="tab-search">
    <h2 class="visually-hidden">Web search</h2>
    <form id="search-form" class="row">
      <div class="field grow">
        <label for="search-keywords">Keywords</label>
        <input id="search-keywords" name="keywords" type="search" required maxlength="1000" autocomplete="off">
      </div>
      <div class="field">
        <label for="search-num">Results</label>
        <input id="search-num" name="num" type="number" min="1" max="100" value="10">
      </div>
      <div class="field">
        <label for="search-freshness">Freshness</label>
        <select id="search-freshness" name="freshness">
          <option value="">Any time</option>
          <option value="day">Past day</option>
          <option value="week">Past week</option>
          <option value="month">Past month</option>
          <option value="year">Past year</option>
        </select>
      </div>
      <button type="submit">Search</button>
    </form>
    <p id="search-status" class="status" role="status" aria-live="polite"></p>
    <ol id="search-results" class="results" aria-label="Web results"></ol>
    <details id="search-curl" class="curl" hidden><summary>Equivalent curl</summary><pre><code></code></pre></details>
    <details id="search-json" class="curl" hidden><summary>Response JSON</summary><pre><code></code></pre></details>
  </section>

  <section role="tabpanel" id="panel-images" aria-labelledby="tab-images" hidden>
    <h2 class="visually-hidden">Image search</h2>
    <form id="images-form" class="row">
      <div class="field grow">
        <label for="images-keywords">Keywords</label>
        <input id="images-keywords" name="keywords" type="search" required maxlength="1000" autocomplete="off">
      </div>
      <div class="field">
        <label for="images-num">Results</label>
        <input id="images-num" name="num" type="number" min="1" max="100" value="20">
      </div>
      <button type="submit">Search images</button>
    </form>
    <p id="images-status" class="status" role="status" aria-live="polite"></p>
    <ul id="images-results" class="images" aria-label="Image results"></ul>
    <details id="images-curl" class="curl" hidden><summary>Equivalent curl</summary><pre><code></code></pre></details>
  </section>

  <section role="tabpanel" id="panel-chat" aria-labelledby="tab-chat" hidden>
    <h2 class="visually-hidden">Chat</h2>
    <form id="chat-form">
      <div class="row">
        <div class="field">
          <label for="chat-model">Model</label>
          <select id="chat-model" name="model"><option value="">(enter a key to list models)</option></select>
        </div>
        <div class="field">
          <label for="chat-temperature">Temperature</label>
          <input id="chat-temperature" name="temperature" type="number" min="0" max="2" step="0.1" placeholder="default">
        </div>
        <div class="field">
          <label for="chat-max-tokens">Max tokens</label>
          <input id="chat-max-tokens" name="max_tokens" type="number" min="1" placeholder="default">
        </div>
        <div class="field">
          <label for="chat-web-search">Web search</label>
          <select id="chat-web-search" name="web_search" aria-describedby="chat-web-search-hint">
            <option value="">off</option>
            <option value="low">low (3 sources)</option>
            <option value="medium">medium (5, top pages read)</option>
            <option value="high">high (8, top pages read)</option>
          </select>
          <span id="chat-web-search-hint" class="hint">Grounds the answer in a search; citations link to the sources.</span>
        </div>
      </div>
      <details>
        <summary>System message and tools</summary>
        <div class="field">
          <label for="chat-system">System message</label>
          <textarea id="chat-system" name="system" rows="2"></textarea>
        </div>
        <div class="field">
          <label for="chat-tools">Tools (JSON array of OpenAI function tools)</label>
          <textarea id="chat-tools" name="tools" rows="4" aria-describedby="chat-tools-hint"></textarea>
          <span id="chat-tools-hint" class="hint">Left empty, no tools are offered.</span>
        </div>
      </details>
      <div class="field">
        <label for="chat-input">Message</label>
        <textarea id="chat-input" name="message" rows="3" required aria-describedby="chat-input-hint"></textarea>
        <span id="chat-input-hint" class="hint">Ctrl+Enter sends.</span>
      </div>
      <div class="row">
        <button type="submit" id="chat-send">Send</button>
        <button type="button" id="chat-stop" class="secondary" disabled>Stop</button>
        <button type="button" id="chat-clear" class="secondary">New conversation</button>
      </div>
    </form>
    <p id="chat-status" class="status" role="status" aria-live="polite"></p>
    <div id="chat-transcript" class="transcript" role="log" aria-label="Conversation" aria-live="polite"></div>
    <details id="chat-curl" class="curl" hidden><summary>Equivalent curl</summary><pre><code></code></pre></details>
  </section>
</main>
<footer>
  <p>Requests go from this browser to this server with your key. The curl lines read the key from <code>$PERISCOPE_API_KEY</code>.</p>
</footer>
</body>
</html>
`
