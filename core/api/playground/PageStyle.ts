/**
 * The stylesheet of the playground and the API reference, served as
 * /playground.css (the pages' CSP allows styles from 'self' only). Colours
 * meet WCAG AA contrast on white (text 4.5:1, focus ring 3:1).
 */
export const pageStyle = `
:root {
  --text: #1b1f24; --muted: #4d5560; --line: #c9d1da; --soft: #f3f5f8;
  --accent: #0a58a8; --accent-text: #ffffff; --focus: #b34700; --bad: #a4161a; --good: #1d6b35;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--text); background: #ffffff;
  line-height: 1.5;
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; top: 0; background: var(--accent); color: var(--accent-text); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: 0; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem 2rem; padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--soft); }
header.top h1 { font-size: 1.25rem; margin: 0; }
header.top nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
form.key { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; margin-left: auto; }
form.key input { width: 16rem; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
footer { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem; color: var(--muted); border-top: 1px solid var(--line); font-size: .9rem; }
label { font-weight: 600; }
input, select, textarea, button { font: inherit; color: inherit; }
input, select, textarea { border: 1px solid #6b7480; border-radius: 4px; padding: .35rem .5rem; background: #ffffff; }
textarea { width: 100%; resize: vertical; }
button { border: 1px solid var(--accent); border-radius: 4px; padding: .35rem .9rem; background: var(--accent); color: var(--accent-text); cursor: pointer; }
button.secondary { background: #ffffff; color: var(--accent); }
button:disabled { opacity: .6; cursor: not-allowed; }
.row { display: flex; flex-wrap: wrap; align-items: end; gap: .75rem 1rem; margin: .5rem 0; }
.field { display: flex; flex-direction: column; gap: .2rem; }
.field.grow { flex: 1 1 20rem; }
.hint, .status { color: var(--muted); font-size: .9rem; }
.status.bad, .error { color: var(--bad); }
.error { border: 1px solid var(--bad); border-radius: 4px; padding: .5rem .75rem; background: #fff5f5; }
[role="tablist"] { display: flex; gap: .25rem; border-bottom: 2px solid var(--line); margin: .5rem 0 1rem; }
[role="tab"] { background: #ffffff; color: var(--text); border: 1px solid var(--line); border-bottom: none; border-radius: 6px 6px 0 0; padding: .45rem 1.1rem; }
[role="tab"][aria-selected="true"] { background: var(--accent); color: var(--accent-text); border-color: var(--accent); }
ol.results { list-style: none; padding: 0; margin: 1rem 0; }
ol.results li { padding: .6rem 0; border-bottom: 1px solid var(--line); }
ol.results h3 { font-size: 1.05rem; margin: 0; }
.url { color: var(--good); font-size: .85rem; overflow-wrap: anywhere; }
.meta { color: var(--muted); font-size: .85rem; }
ol.results p { margin: .1rem 0; }
.snippet { margin: .25rem 0 0; }
ul.images { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: 1rem; }
ul.images figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; background: var(--soft); }
ul.images img { display: block; width: 100%; height: auto; aspect-ratio: 16 / 10; object-fit: cover; background: #e4e8ee; }
ul.images figcaption { padding: .4rem .6rem; font-size: .9rem; overflow-wrap: anywhere; }
pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88rem; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: .6rem .8rem; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
details > summary { cursor: pointer; font-weight: 600; }
.curl { margin: 1rem 0; }
.transcript { display: flex; flex-direction: column; gap: .75rem; margin: 1rem 0; }
.turn { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .9rem; }
.turn.user { background: var(--soft); }
.turn h3 { font-size: .95rem; margin: 0 0 .3rem; color: var(--muted); }
.turn .content { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
.turn .reasoning { color: var(--muted); white-space: pre-wrap; margin: .3rem 0 .6rem; padding-left: .75rem; border-left: 3px solid var(--line); }
.turn h4 { font-size: .9rem; margin: .6rem 0 .2rem; }
.turn ul { margin: .2rem 0; padding-left: 1.2rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--soft); }
.method { display: inline-block; min-width: 3.5rem; font-weight: 700; color: var(--accent); }
section.endpoint { border-top: 1px solid var(--line); padding-top: .5rem; margin-top: 1.5rem; }
li > .schema { display: inline; }
.schema ul { margin: .15rem 0; padding-left: 1.2rem; }
.schema .name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-weight: 600; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`
