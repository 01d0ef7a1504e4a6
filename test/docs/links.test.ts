/**
 * The docs a newcomer reads hold together: every relative link and #anchor in README.md,
 * DEVELOPERS.md and docs/*.md resolves (anchors as GitHub renders heading ids), and the pages
 * stay short enough to read: README.md and docs/performance.md at most 300 lines, DEVELOPERS.md
 * at most 6 KB.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")

const docFiles = (base: string): Array<string> => [
  join(base, "README.md"),
  join(base, "DEVELOPERS.md"),
  ...(existsSync(join(base, "docs"))
    ? readdirSync(join(base, "docs")).filter((f) => f.endsWith(".md")).map((f) => join(base, "docs", f))
    : [])
].filter((f) => existsSync(f))

/** The lines outside fenced code blocks, inline code spans blanked (links in code are not links). */
const proseLines = (text: string): Array<string> => {
  const lines: Array<string> = []
  let fence: string | undefined
  for (const line of text.split("\n")) {
    const marker = line.match(/^\s*(```+|~~~+)/)?.[1]
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0]
      else if (marker[0] === fence) fence = undefined
      continue
    }
    if (fence === undefined) lines.push(line.replace(/`+[^`]*`+/g, (code) => " ".repeat(code.length)))
  }
  return lines
}

/** A heading's id as GitHub makes it: the rendered text lower-cased, punctuation dropped, spaces as hyphens. */
const slugOf = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-")

/** Every heading id of a Markdown file, repeats numbered as GitHub numbers them (`-1`, `-2`). */
const anchorsOf = (file: string): Set<string> => {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  let fence: string | undefined
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const marker = line.match(/^\s*(```+|~~~+)/)?.[1]
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0]
      else if (marker[0] === fence) fence = undefined
      continue
    }
    const heading = fence === undefined ? line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/)?.[1] : undefined
    if (heading === undefined) continue
    const slug = slugOf(heading)
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/** Each relative link of a file that does not resolve, as `file:line: target (why)`. */
const brokenLinks = (file: string, base: string): Array<string> => {
  const broken: Array<string> = []
  proseLines(readFileSync(file, "utf8")).forEach((line, i) => {
    for (const match of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1]!
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
      const [path, anchor] = target.split("#", 2) as [string, string | undefined]
      const where = path === "" ? file : resolve(dirname(file), decodeURIComponent(path))
      const at = `${relative(base, file)}:${i + 1}: ${target}`
      if (!existsSync(where)) {
        broken.push(`${at} (no such file)`)
        continue
      }
      if (anchor === undefined) continue
      if (!statSync(where).isFile() || !where.endsWith(".md")) broken.push(`${at} (an anchor into a file that is not Markdown)`)
      else if (!anchorsOf(where).has(anchor)) broken.push(`${at} (no heading with that id)`)
    }
  })
  return broken
}

describe("docs", () => {
  it("resolve every relative link and anchor", () => {
    const files = docFiles(root)
    expect(files.map((f) => relative(root, f))).toEqual(expect.arrayContaining(["README.md", "DEVELOPERS.md", "docs/performance.md"]))
    expect(files.flatMap((f) => brokenLinks(f, root))).toEqual([])
  })

  it("stay short: README.md and docs/performance.md at most 300 lines, DEVELOPERS.md at most 6 KB", () => {
    const lines = (file: string) => readFileSync(join(root, file), "utf8").replace(/\n$/, "").split("\n").length
    expect(lines("README.md")).toBeLessThanOrEqual(300)
    expect(lines("docs/performance.md")).toBeLessThanOrEqual(300)
    expect(statSync(join(root, "DEVELOPERS.md")).size).toBeLessThanOrEqual(6 * 1024)
  })

  describe("the link check", () => {
    const dir = mkdtempSync(join(tmpdir(), "periscope-links-"))
    afterAll(() => rmSync(dir, { recursive: true, force: true }))

    it("finds a missing file, a missing anchor and a repeated heading's id, and ignores code and URLs", () => {
      writeFileSync(join(dir, "README.md"), [
        "# Title",
        "## Fetch `webFetch` **errors**",
        "## Setup",
        "## Setup",
        "[ok](#fetch-webfetch-errors) [ok](#setup-1) [ok](other.md#a-b) [ok](https://example.com/x#y)",
        "[missing file](nowhere.md) [missing anchor](#setup-2) [missing there](other.md#c)",
        "`[in code](nowhere.md)`",
        "```",
        "[in a fence](nowhere.md)",
        "```"
      ].join("\n"))
      writeFileSync(join(dir, "other.md"), "# A: b\n")
      expect(brokenLinks(join(dir, "README.md"), dir)).toEqual([
        "README.md:6: nowhere.md (no such file)",
        "README.md:6: #setup-2 (no heading with that id)",
        "README.md:6: other.md#c (no heading with that id)"
      ])
    })
  })
})
