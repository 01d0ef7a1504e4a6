/**
 * Pages a documentation generator writes as lists of every term, module or
 * class (Sphinx genindex, Javadoc index-all, Doxygen member lists, search
 * pages). They match every query a little and long ones rank near the top,
 * yet answer none: they are left out of the index by default.
 * Crawls still follow their links. Judged on the URL's last path segment,
 * so a folder, a crawl and an archive agree.
 */

interface Rule {
  readonly name: RegExp
  readonly kind: string
}

const RULES: ReadonlyArray<Rule> = [
  // Sphinx: genindex.html, genindex-A.html, genindex-all.html, py-modindex.html, np-modindex.html, search.html
  { name: /^genindex(?:-[\w]+)?\.html?$/i, kind: "Sphinx general index" },
  { name: /^(?:[a-z]+-)?modindex\.html?$/i, kind: "Sphinx module index" },
  { name: /^search\.html?$/i, kind: "search page" },
  { name: /^searchindex\.html?$/i, kind: "search page" },
  // Javadoc: index-all.html, index-files/index-3.html, allclasses-*.html, trees and lists.
  { name: /^index-all\.html?$/i, kind: "Javadoc index" },
  { name: /^index-\d+\.html?$/i, kind: "Javadoc index" },
  { name: /^all(?:classes|packages)(?:-index|-frame|-noframe)?\.html?$/i, kind: "Javadoc class list" },
  { name: /^(?:overview|package)-tree\.html?$/i, kind: "Javadoc class tree" },
  { name: /^(?:deprecated-list|constant-values|serialized-form|overview-frame)\.html?$/i, kind: "Javadoc generated list" },
  // Doxygen member and file lists.
  { name: /^(?:globals|functions|namespacemembers)(?:_[a-z]+)*\.html?$/i, kind: "Doxygen member list" },
  { name: /^(?:annotated|hierarchy|classes|files)\.html?$/i, kind: "Doxygen class list" },
  // rustdoc's list of every item.
  { name: /^all\.html?$/i, kind: "rustdoc item list" }
]

/** The kind of generated index page `url` is ("Sphinx general index"), or undefined for an ordinary page. */
export const generatedPageKind = (url: string): string | undefined => {
  let path: string
  try {
    path = new URL(url).pathname
  } catch {
    path = url
  }
  const last = path.split("/").filter((s) => s !== "").pop()
  if (last === undefined) return undefined
  let name: string
  try {
    name = decodeURIComponent(last)
  } catch {
    name = last
  }
  for (const rule of RULES) if (rule.name.test(name)) return rule.kind
  return undefined
}

/** The skip reason the summary shows for a generated page. */
export const generatedPageReason = (kind: string): string => `generated index page (${kind})`
