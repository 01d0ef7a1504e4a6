/**
 * The API reference's markup, served at `/docs`: a shell that /docs.js fills
 * from /openapi.json (fetched with the key the playground keeps).
 */
import { keyForm } from "./KeyForm.ts"

export const apiDocsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Periscope API reference</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/playground.css">
<script src="/docs.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <h1>Periscope API reference</h1>
  <nav aria-label="Site">
    <ul>
      <li><a href="/">Playground</a></li>
      <li><a href="/docs" aria-current="page">API reference</a></li>
    </ul>
  </nav>
${keyForm}
</header>
<main id="main" tabindex="-1">
  <p id="docs-status" class="status" role="status" aria-live="polite">Loading /openapi.json…</p>
  <div id="docs-content"></div>
</main>
<footer>
  <p>Rendered in this browser from <code>/openapi.json</code>, which needs an API key like the API itself.</p>
</footer>
</body>
</html>
`
