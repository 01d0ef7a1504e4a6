/**
 * `periscope index` as a user runs it: the real CLI in a child process, real
 * files and a real crawl of a loopback server, into a snapshot in a temporary
 * data directory that is then decoded and searched.
 */
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { decodeSnapshot } from "../../core/index/Snapshot.ts"
import { page, sendHtml, startSiteServer } from "./support/siteServer.ts"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "periscope-index-cli-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<CliRun> =>
  new Promise((done) => {
    execFile(process.execPath, ["adapters/node/cli.ts", "index", ...args], {
      cwd: root,
      env: { ...process.env, PERISCOPE_DATA_DIR: join(work, "default-data"), ...env },
      timeout: 120_000
    }, (error, stdout, stderr) => done({ code: error === null ? 0 : (error as { code?: number }).code ?? 1, stdout, stderr }))
  })

const load = (path: string) => decodeSnapshot(new Uint8Array(readFileSync(path)))

const site = join(work, "site")
mkdirSync(join(site, "guide"), { recursive: true })
writeFileSync(join(site, "index.html"),
  `<html lang="en"><head><title>Orchard handbook</title></head><body><nav>Home | Guide</nav><main><h1>Orchard handbook</h1>` +
    `<p>How to plant, prune and harvest apple trees in a small orchard.</p><figure><img src="img/tree.jpg" alt="A pruned apple tree" width="800" height="600">` +
    `<figcaption>An apple tree after winter pruning</figcaption></figure></main></body></html>`)
writeFileSync(join(site, "guide", "pruning.html"),
  `<html lang="en"><head><title>Pruning | Orchard handbook</title><meta property="article:published_time" content="2022-02-14"></head>` +
    `<body><main><h1>Pruning</h1><p>Prune apple trees in late winter, when the buds are still dormant.</p></main></body></html>`)
writeFileSync(join(site, "guide", "blank.html"), `<html><body><script>render()</script></body></html>`)
const jsonl = join(work, "extra.jsonl")
writeFileSync(jsonl, [
  JSON.stringify({ url: "https://notes.example.org/cider", title: "Making cider", text: "Press ripe apples and let the juice ferment slowly." }),
  JSON.stringify({ url: "not a url", title: "Broken", text: "x" })
].join("\n"))

describe("periscope index", () => {
  const out = join(work, "data", "index.snapshot")

  it("builds a snapshot from a folder and a JSONL file, counting what it skipped and what failed", async () => {
    const run = await cli([`${site}=https://orchard.example.com/handbook/`, jsonl, "--out", out])
    // 2: written, but an input was damaged (the bad JSONL line).
    expect(run.code, run.stderr).toBe(2)
    expect(run.stdout).toContain("Indexed 3 documents")
    expect(run.stdout).toMatch(/Snapshot .*index\.snapshot \(.* MiB\): 3 documents, 1 images\./)
    expect(run.stdout).toMatch(/Skipped: 1:\n\s+1  no main text/)
    expect(run.stdout).toContain(`Errors: 1 (showing 1):\n  ${jsonl}:2: url: must be an absolute http(s) URL, got "not a url" (a string)`)

    const index = load(out)
    const hits = index.search("prune apple trees winter", 10).hits
    expect(hits.find((h) => h.link === "https://orchard.example.com/handbook/guide/pruning.html"))
      .toMatchObject({ title: "Pruning", date: "2022-02-14" })
    expect(index.searchImages("pruned apple tree", 5)).toMatchObject([
      { url: "https://orchard.example.com/handbook/img/tree.jpg", refUrl: "https://orchard.example.com/handbook/index.html", title: "A pruned apple tree" }
    ])
  })

  it("updates the snapshot: earlier documents stay, a page read again replaces its old version", async () => {
    writeFileSync(join(site, "guide", "pruning.html"),
      `<html lang="en"><head><title>Pruning</title></head><body><main><h1>Pruning</h1>` +
        `<p>Prune in late winter; cut crossing branches first, then open the centre.</p></main></body></html>`)
    const run = await cli([`${join(site, "guide")}=https://orchard.example.com/handbook/guide/`, "--out", out])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain("3 documents, 1 images, 3 carried over from the previous snapshot")
    expect(run.stdout).toContain("Duplicates collapsed: 1 with the same URL (newest kept)")
    const index = load(out)
    expect(index.documentCount).toBe(3)
    expect(index.search("crossing branches", 5).hits.map((h) => h.link)).toEqual(["https://orchard.example.com/handbook/guide/pruning.html"])
    expect(index.search("cider", 5).hits.map((h) => h.link)).toEqual(["https://notes.example.org/cider"])
  })

  it("crawls a site into the snapshot in PERISCOPE_DATA_DIR when no --out is given", async () => {
    const server = await startSiteServer({
      "/": sendHtml(page("Beekeeping basics", ["/hives"])),
      "/hives": sendHtml(page("Choosing hives"))
    })
    try {
      const dataDir = join(work, "crawl-data")
      const run = await cli([`${server.origin}/`, "--allow-private", server.host, "--delay-ms", "0"], { PERISCOPE_DATA_DIR: dataDir })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout).toContain("Indexed 2 documents")
      const index = load(join(dataDir, "index.snapshot"))
      expect(index.search("choosing hives", 5).hits.map((h) => h.link)).toContain(`${server.origin}/hives`)
      expect(index.documentCount).toBe(2)
    } finally {
      await server.close()
    }
  })

  it("refuses to overwrite a snapshot it cannot read, unless told --fresh", async () => {
    const bad = join(work, "bad", "index.snapshot")
    mkdirSync(join(work, "bad"), { recursive: true })
    writeFileSync(bad, "not a snapshot")
    const run = await cli([jsonl, "--out", bad])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`periscope: ${bad}: is not a readable snapshot`)
    expect(run.stderr).toContain("use --fresh to replace it")
    expect(readFileSync(bad, "utf8")).toBe("not a snapshot")

    const fresh = await cli([jsonl, "--out", bad, "--fresh"])
    expect(fresh.code, fresh.stderr).toBe(2)
    expect(load(bad).documentCount).toBe(1)
  })

  it("names the argument that cannot be used, before doing any work", async () => {
    const missing = await cli([join(work, "no-such-folder"), "--out", join(work, "never.snapshot")])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`periscope: ${join(work, "no-such-folder")}: no such file or folder`)
    const noBase = await cli([site, "--out", join(work, "never.snapshot")])
    expect(noBase.code).toBe(1)
    expect(noBase.stderr).toContain("a folder needs the URL it is published at")
    expect(() => readFileSync(join(work, "never.snapshot"))).toThrow()
  })
})
