/**
 * Browser helpers both pages' scripts use (plain ES2020, no template literals
 * so it can live in this string): `Dom.byId(id)` and `Dom.el(tag, props,
 * children)`, which sets text through textContent only, never as markup.
 */
export const domScript = String.raw`
var Dom = (function () {
  function byId(id) { return document.getElementById(id); }

  /** An element with text and attributes; children are nodes or strings (as text). */
  function el(tag, props, children) {
    var node = document.createElement(tag);
    if (props) {
      for (var name in props) {
        var value = props[name];
        if (value === undefined || value === null) continue;
        if (name === "text") node.textContent = value;
        else if (name === "className") node.className = value;
        else node.setAttribute(name, value);
      }
    }
    if (children) {
      for (var i = 0; i < children.length; i++) {
        var child = children[i];
        if (child === null || child === undefined) continue;
        node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
      }
    }
    return node;
  }

  return { byId: byId, el: el };
})();
`
