/**
 * HTML to document on real pages from Debian's documentation packages. For
 * each page, what a careful reader sees in a browser was written down by hand
 * (title, date, the first words of the main text, the images and their alt
 * text, what is navigation and not content); extraction must match it.
 */
import { describe, expect, it } from "vitest"
import { extractPage } from "../../core/ingest/HtmlDocument.ts"
import { debianDocsOrSkip, type DocPage, largePackages, readPage } from "../support/debianDocs.ts"

const pages = debianDocsOrSkip(largePackages)

const pageAt = (suffix: string): DocPage => {
  const found = pages!.find((p) => p.file.endsWith(suffix))
  if (found === undefined) throw new Error(`page ${suffix} is not in the corpus`)
  return found
}

const extract = (suffix: string) => {
  const page = pageAt(suffix)
  return extractPage(readPage(page), page.url)
}

describe.skipIf(pages === undefined)("real pages from Debian documentation packages", () => {
  it("Python library reference: json", () => {
    const { document } = extract("python3.11/html/library/json.html")
    // The tab reads "json — JSON encoder and decoder — Python 3.11.2 documentation"; the site name goes.
    expect(document.title).toBe("json — JSON encoder and decoder")
    expect(document.url).toBe("https://docs.python.org/3.11/library/json.html")
    expect(document.lang).toBe("en")
    // The footer says "Last updated on October 07, 2026": when the docs were built, not published.
    expect(document.date).toBeNull()
    expect(document.text.startsWith(
      "json — JSON encoder and decoder\n\nSource code: Lib/json/__init__.py\n\n" +
        "JSON (JavaScript Object Notation), specified by RFC 7159"
    )).toBe(true)
    expect(document.text).toContain("Be cautious when parsing JSON data from untrusted sources.")
    // Sidebar, related-pages bar and footer are not content.
    for (const boilerplate of ["Table of Contents", "Previous topic", "Report a Bug", "Show Source", "Last updated", "Quick search"]) {
      expect(document.text).not.toContain(boilerplate)
    }
    expect(document.text).not.toContain("¶")
    expect(document.images ?? []).toEqual([])
  })

  it("PostgreSQL reference page: CREATE TABLE", () => {
    const { document } = extract("postgresql-doc-15/html/sql-createtable.html")
    expect(document.title).toBe("CREATE TABLE")
    expect(document.url).toBe("https://www.postgresql.org/docs/15/sql-createtable.html")
    expect(document.date).toBeNull()
    // A reader sees the name line first, then the synopsis; navigation ("Prev Up ... Next") is not text.
    expect(document.text.startsWith("CREATE TABLE\n\nCREATE TABLE — define a new table\n\nSynopsis\n\nCREATE [ [ GLOBAL | LOCAL ]")).toBe(true)
    expect(document.text).toContain("CREATE TABLE will create a new, initially empty table in the current database.")
    // The page's last section, and the parameter list in between, are all there.
    expect(document.text).toContain("If specified, the table is created as a temporary table.")
    expect(document.text.endsWith("See Also\n\nALTER TABLE, DROP TABLE, CREATE TABLE AS, CREATE TABLESPACE, CREATE TYPE")).toBe(true)
    expect(document.text).not.toMatch(/\bPrev\b/)
    expect(document.text).not.toContain("Submit correction")
    expect(document.images ?? []).toEqual([])
  })

  it("Django topic guide: How to use sessions", () => {
    const { document } = extract("python-django-doc/html/topics/http/sessions.html")
    expect(document.title).toBe("How to use sessions")
    expect(document.url).toBe("https://docs.djangoproject.com/en/3.2/topics/http/sessions.html")
    expect(document.lang).toBe("en")
    expect(document.date).toBeNull()
    expect(document.text.startsWith(
      "How to use sessions\n\nDjango provides full support for anonymous sessions. The session framework lets you store"
    )).toBe(true)
    expect(document.text).toContain("Enabling sessions\n\nSessions are implemented via a piece of middleware.")
    // The page header (site name, "Home | Table of contents | Index | Modules") and the sidebar are not content.
    for (const boilerplate of ["Django 3.2.25 documentation", "Table of contents", "Quick search"]) {
      expect(document.text).not.toContain(boilerplate)
    }
    expect(document.text).not.toMatch(/(^|\n)Browse(\n|$)/)
  })

  it("GIMP manual: the Crop tool, with its figures", () => {
    const { document } = extract("gimp/2.0/help/en/gimp-tool-crop.html")
    expect(document.title).toBe("4.4. Crop")
    expect(document.url).toBe("https://docs.gimp.org/2.10/en/gimp-tool-crop.html")
    expect(document.date).toBeNull()
    expect(document.text.startsWith(
      "4.4. Crop\n\nFigure 14.127. Crop tool\n\nThe Crop Tool is used to crop or clip an image. It works on all the layers"
    )).toBe(true)
    expect(document.text).not.toMatch(/^Prev|\bNext\b/)
    const base = "https://docs.gimp.org/2.10/en/images/toolbox/"
    // The figures a reader sees, with their alt text and captions; the Prev/Next/Up/Home arrows and the
    // "[Note]" and "[Tip]" admonition icons are decoration. The small toolbox icon in the text has no alt.
    expect(document.images).toEqual([
      { url: `${base}toolbox-crop.png`, alt: "Crop tool", caption: "Figure 14.127. Crop tool", heading: "4.4. Crop", title: undefined, width: undefined, height: undefined },
      { url: `${base}stock-tool-crop-22.png`, alt: undefined, caption: undefined, heading: "4.4.1. Activating the Tool", title: undefined, width: undefined, height: undefined },
      { url: `${base}crop-dialog.png`, alt: "Tool Options for the “Crop” tool", caption: "Figure 14.128. Tool Options for the “Crop” tool", heading: "4.4.3. Tool Options", title: undefined, width: undefined, height: undefined },
      { url: `${base}crop-grow-1.png`, alt: "Example for “Allow Growing”", caption: "An image on a big canvas", heading: "4.4.3. Tool Options", title: undefined, width: undefined, height: undefined },
      { url: `${base}crop-grow-2.png`, alt: "Example for “Allow Growing”", caption: "The option is checked. The crop rectangle extends outside the canvas.", heading: "4.4.3. Tool Options", title: undefined, width: undefined, height: undefined },
      { url: `${base}crop-grow-3.png`, alt: "Example for “Allow Growing”", caption: "The resulting image.", heading: "4.4.3. Tool Options", title: undefined, width: undefined, height: undefined },
      { url: `${base}autoshrink-1.png`, alt: "Example for “Autoshrink”", caption: "An image with a sharp limit in it and a crop rectangle.", heading: "4.4.3. Tool Options", title: undefined, width: undefined, height: undefined },
      { url: `${base}autoshrink-2.png`, alt: "Example for “Autoshrink”", caption: "After clicking the Autoshrink button, the crop rectangle has been shrunk to fit the sharp limits.", heading: "4.4.3. Tool Options", title: undefined, width: undefined, height: undefined }
    ])
  })

  it("SciPy reference: scipy.stats.gennorm, with its example plot", () => {
    const { document } = extract("python-scipy-doc/html/reference/generated/scipy.stats.gennorm.html")
    expect(document.title).toBe("scipy.stats.gennorm")
    expect(document.date).toBeNull()
    expect(document.text.startsWith(
      "scipy.stats.gennorm\n\nscipy.stats.gennorm = <scipy.stats._continuous_distns.gennorm_gen object>[source]\n\n" +
        "A generalized normal continuous random variable."
    )).toBe(true)
    // The "previous / next" buttons at the bottom are navigation.
    expect(document.text).not.toMatch(/\n\nprevious\n\n/)
    expect(document.text.endsWith("Confidence interval with equal areas around the median.")).toBe(true)
    // The plot's alt is only its file path (Sphinx's default), which says nothing: no alt.
    expect(document.images).toEqual([
      {
        url: "https://docs.scipy.org/doc/scipy-1.10.1/_images/scipy-stats-gennorm-1.png",
        alt: undefined,
        caption: undefined,
        heading: "Examples",
        title: undefined,
        width: undefined,
        height: undefined
      }
    ])
  })

  it("a quarter of the four core packages' pages (every 4th) give titled documents without throwing", () => {
    const core = pages!.filter((p, i) => p.pkg !== "python-scipy-doc" && i % 4 === 0)
    let withText = 0
    for (const page of core) {
      const { document } = extractPage(readPage(page), page.url)
      expect(document.title.length, page.file).toBeGreaterThan(0)
      if (document.text.length > 0) withText++
    }
    // Index and redirect stubs may be empty; real documentation pages are not.
    expect(withText / core.length).toBeGreaterThan(0.99)
  }, 600_000)
})
