/**
 * The API key form both pages share, and the script that keeps the key in
 * the browser's localStorage (never sent anywhere but this server's API).
 */

export const keyForm = `  <form id="key-form" class="key" aria-label="API key">
    <label for="api-key">API key</label>
    <input id="api-key" name="key" type="password" autocomplete="off" spellcheck="false" aria-describedby="key-status">
    <button type="submit">Save key</button>
    <button type="button" id="key-forget" class="secondary">Forget key</button>
    <span id="key-status" class="status" role="status" aria-live="polite"></span>
  </form>`

/**
 * Browser code (plain ES2020, no template literals so it can live in this
 * string): `Key.get()`, and `Key.init(onChange)` wiring the form. Needs DomScript first.
 */
export const keyScript = String.raw`
var Key = (function () {
  var STORAGE = "periscope.apiKey";
  var memory = "";
  function get() {
    try { return localStorage.getItem(STORAGE) || memory; } catch (e) { return memory; }
  }
  function set(value) {
    memory = value;
    try {
      if (value) localStorage.setItem(STORAGE, value); else localStorage.removeItem(STORAGE);
    } catch (e) { /* storage refused (private mode): the key lives in memory until reload */ }
  }
  function init(onChange) {
    var form = Dom.byId("key-form");
    var input = Dom.byId("api-key");
    var status = Dom.byId("key-status");
    function show() {
      var has = get() !== "";
      status.textContent = has ? "Key saved in this browser." : "No key saved: requests will be refused (401).";
      status.classList.toggle("bad", !has);
    }
    input.value = get();
    show();
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      set(input.value.trim());
      show();
      onChange(get());
    });
    Dom.byId("key-forget").addEventListener("click", function () {
      set("");
      input.value = "";
      show();
      input.focus();
      onChange("");
    });
  }
  return { get: get, init: init };
})();
`
