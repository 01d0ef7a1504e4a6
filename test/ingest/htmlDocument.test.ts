/**
 * The extraction rules one at a time, on small pages written here: title
 * sources and site-name removal, canonical links, publish dates (and what is
 * never a publish date), images (srcset, lazy loading, what is skipped),
 * boilerplate, language, and pages so broken that only "no crash" is asked.
 */
import { describe, expect, it } from "vitest"
import { decodeHtml } from "../../core/ingest/HtmlBytes.ts"
import { extractPage, htmlToDocument } from "../../core/ingest/HtmlDocument.ts"
import { toIsoDate } from "../../core/index/IsoDate.ts"
import { stripSiteName } from "../../core/ingest/PageTitle.ts"
import { parseSitemap } from "../../core/ingest/Sitemap.ts"

const URL_ = "https://blog.example.com/posts/hello.html"
const prose = "<p>Enough words of real prose to count as the main content of this small test page, written by hand.</p>"
const doc = (head: string, body: string, url = URL_) =>
  htmlToDocument(`<!doctype html><html><head>${head}</head><body>${body}</body></html>`, url)

describe("title", () => {
  it("trusts og:title, then <title>, then the first h1", () => {
    expect(doc(`<meta property="og:title" content="From OG"><title>From title</title>`, `<h1>From h1</h1>${prose}`).title).toBe("From OG")
    expect(doc(`<title>From title</title>`, `<h1>From h1</h1>${prose}`).title).toBe("From title")
    expect(doc(``, `<h1>From  <em>h1</em></h1>${prose}`).title).toBe("From h1")
    // No title anywhere: the file name of the link.
    expect(doc(``, prose, "https://example.com/guides/getting-started.html").title).toBe("getting started")
  })

  it("cuts the site name off, by heading, declared site name or host", () => {
    expect(stripSiteName("Intro — My Docs", ["Intro"], [], "x.org")).toBe("Intro")
    expect(stripSiteName("Blog | Deep dive: caches", ["Deep dive: caches"], [], "x.org")).toBe("Deep dive: caches")
    expect(stripSiteName("Release notes - Acme Portal", [], ["Acme Portal"], "x.org")).toBe("Release notes")
    expect(stripSiteName("Acme Portal :: Release notes", [], ["Acme Portal"], "x.org")).toBe("Release notes")
    expect(stripSiteName("Pricing | Example", [], [], "www.example.com")).toBe("Pricing")
    expect(stripSiteName("Install guide · Python 3.12 docs", [], [], "docs.python.org")).toBe("Install guide")
    // No evidence that a part is a site name: the title stays whole.
    expect(stripSiteName("Cats - the complete guide", [], [], "pets.org")).toBe("Cats - the complete guide")
    expect(stripSiteName("e-mail and X-ray", [], [], "x.org")).toBe("e-mail and X-ray")
    expect(doc(`<title>Hello world | The Blog</title><meta property="og:site_name" content="The Blog">`, prose).title).toBe("Hello world")
  })
})

describe("link", () => {
  it("prefers rel=canonical, then og:url, then the source URL, always absolute and without fragment", () => {
    expect(doc(`<link rel="canonical" href="/posts/hello#top"><meta property="og:url" content="https://og.example.com/x">`, prose).url)
      .toBe("https://blog.example.com/posts/hello")
    expect(doc(`<meta property="og:url" content="https://og.example.com/x">`, prose).url).toBe("https://og.example.com/x")
    expect(doc(`<link rel="canonical" href="javascript:alert(1)">`, prose).url).toBe(URL_)
    expect(doc(``, prose, "https://example.com/a?b=1#frag").url).toBe("https://example.com/a?b=1")
  })
})

describe("publish date", () => {
  it("reads each source in order of trust", () => {
    const jsonLd = (o: unknown) => `<script type="application/ld+json">${JSON.stringify(o)}</script>`
    expect(doc(`<meta property="article:published_time" content="2021-03-04T05:06:07+02:00">` +
      jsonLd({ "@type": "BlogPosting", datePublished: "2020-01-01" }), prose).date).toBe("2021-03-04T05:06:07+02:00")
    expect(doc(jsonLd({ "@graph": [{ "@type": "WebPage" }, { "@type": "Article", datePublished: "2020-01-02" }] }), prose).date)
      .toBe("2020-01-02")
    expect(doc(``, `<article><header><time datetime="2019-12-31">New Year's Eve</time></header>${prose}</article>`).date).toBe("2019-12-31")
    expect(doc(`<meta name="DC.date.issued" content="2018-07-08">`, prose).date).toBe("2018-07-08")
    expect(doc(`<meta name="citation_publication_date" content="2017/02/03">`, prose).date).toBe("2017-02-03")
    expect(doc(``, prose, "https://news.example.com/2016/05/06/story.html").date).toBe("2016-05-06")
    expect(doc(``, prose, "https://news.example.com/2016-05-07-story").date).toBe("2016-05-07")
  })

  it("skips a broken source for the next good one", () => {
    expect(doc(`<script type="application/ld+json">{"datePublished": "2020-01-01",}</script><meta name="date" content="2015-01-02">`, prose).date)
      .toBe("2015-01-02")
    expect(doc(`<meta property="article:published_time" content="yesterday"><meta name="date" content="2015-01-03">`, prose).date)
      .toBe("2015-01-03")
  })

  it("is null when unknown, and never a modification, crawl or build stamp", () => {
    expect(doc(``, prose).date).toBeNull()
    expect(doc(`<meta property="article:modified_time" content="2022-01-01"><meta http-equiv="date" content="Tue, 01 Feb 2022 00:00:00 GMT">` +
      `<meta name="last-modified" content="2022-01-01">`, `${prose}<footer>Last updated on Feb 13, 2023. <time datetime="2023-02-13">x</time></footer>`).date)
      .toBeNull()
    // A site header showing today's date, and a listing of several articles, give no page date.
    expect(doc(``, `<header>Today: <time datetime="2024-06-01">June 1</time></header><main>${prose}</main>`).date).toBeNull()
    expect(doc(``, `<article><time datetime="2020-01-01">a</time>${prose}</article><article><time datetime="2020-02-02">b</time></article>`).date).toBeNull()
    // A <time> in a comment thread dates the comment, not the page.
    expect(doc(``, `<article>${prose}<div class="comments"><time datetime="2020-05-05">May 5</time></div></article>`).date).toBeNull()
    expect(doc(`<meta name="date" content="0000-00-00">`, prose).date).toBeNull()
    expect(doc(``, prose, "https://example.com/2016/13/45/not-a-date").date).toBeNull()
  })

  it("normalizes the notations pages use to ISO 8601", () => {
    expect(toIsoDate("2023-04-05")).toBe("2023-04-05")
    expect(toIsoDate("2023-04-05T10:20:30.123Z")).toBe("2023-04-05T10:20:30Z")
    expect(toIsoDate("2023-04-05 10:20")).toBe("2023-04-05T10:20:00")
    expect(toIsoDate("Wed, 05 Apr 2023 10:00:00 +0200")).toBe("2023-04-05T10:00:00+02:00")
    expect(toIsoDate("April 5, 2023")).toBe("2023-04-05")
    expect(toIsoDate("5th April 2023")).toBe("2023-04-05")
    expect(toIsoDate("20230405")).toBe("2023-04-05")
    expect(toIsoDate("2023-02-29")).toBeNull()
    expect(toIsoDate("2023-04-05T25:00")).toBeNull()
    expect(toIsoDate("next Tuesday")).toBeNull()
  })
})

describe("images", () => {
  const images = (body: string, head = "") => doc(head, `<main><h2>Gallery</h2>${prose}${body}</main>`).images ?? []

  it("takes the best source: largest srcset candidate, lazy-loading attributes, then src", () => {
    expect(images(`<img src="small.jpg" srcset="a-400.jpg 400w, a-1600.jpg 1600w, a-800.jpg 800w" alt="A">`)[0]!.url)
      .toBe("https://blog.example.com/posts/a-1600.jpg")
    expect(images(`<img src="data:image/gif;base64,R0lGOD" data-src="/img/lazy.png" alt="Lazy">`)[0]!.url)
      .toBe("https://blog.example.com/img/lazy.png")
    expect(images(`<img srcset="https://cdn.example.com/w_100,h_50/x.jpg 1x, https://cdn.example.com/w_200,h_100/x.jpg 2x">`)[0]!.url)
      .toBe("https://cdn.example.com/w_200,h_100/x.jpg")
    expect(images(`<picture><source srcset="p-2000.webp 2000w"><img src="p.jpg" alt="P"></picture>`)[0]!.url)
      .toBe("https://blog.example.com/posts/p-2000.webp")
    expect(images(`<img src="rel/one.png" alt="One">`, `<base href="https://static.example.net/assets/">`)[0]!.url)
      .toBe("https://static.example.net/assets/rel/one.png")
  })

  it("keeps alt, title, caption, nearest heading and declared size", () => {
    expect(images(`<figure><img src="/f.png" alt="Chart" title="Sales" width="640" height="480"><figcaption>Sales by year</figcaption></figure>`))
      .toEqual([{ url: "https://blog.example.com/f.png", alt: "Chart", title: "Sales", caption: "Sales by year", heading: "Gallery", width: 640, height: 480 }])
  })

  it("skips tracking pixels, spacers, icons, decorative and data: images, repeats, and adds og:image", () => {
    const found = images(
      `<img src="data:image/png;base64,AAAA" alt="inline"><img src="/pixel.gif" alt=""><img src="/spacer.gif">` +
        `<img src="https://www.google-analytics.com/collect?v=1"><img src="/t.png" width="1" height="1">` +
        `<img src="/favicon.ico"><img src="/icons/share.png"><img src="/img/icon-search.svg"><img src="/small.png" width="16" height="16">` +
        `<img src="/deco.png" role="presentation"><img src="/note.png" alt="[Note]"><img src="https://img.shields.io/npm/v/x.svg" alt="npm">` +
        `<img src="/photo.jpg"><img src="/photo.jpg" alt="Second sighting has the alt">`,
      `<meta property="og:image" content="/cover.jpg"><meta property="og:image:alt" content="Cover"><meta property="og:image:width" content="1200">`
    )
    expect(found).toEqual([
      { url: "https://blog.example.com/photo.jpg", alt: "Second sighting has the alt", title: undefined, caption: undefined, heading: "Gallery", width: undefined, height: undefined },
      { url: "https://blog.example.com/cover.jpg", alt: "Cover", width: 1200, height: undefined }
    ])
  })
})

describe("main text", () => {
  it("drops navigation, headers, footers, sidebars, scripts and cookie banners", () => {
    const page = doc(
      `<title>Story</title><style>p{}</style>`,
      `<div id="cookie-banner">We use cookies. Accept all</div><header><a href="/">Home</a> <a href="/about">About</a></header>` +
        `<nav><ul><li>Menu one</li><li>Menu two</li></ul></nav>` +
        `<div class="layout"><aside>Related posts sidebar</aside><div class="content"><h1>Story</h1>${prose}` +
        `<p>Second paragraph<br>with a line break.</p><script>track()</script><pre>code  line 1\n  line 2</pre></div></div>` +
        `<footer>Copyright 2024 Example</footer><div class="share">Share on X</div>`
    )
    expect(page.text).toBe(
      `Story\n\n${prose.replace(/<\/?p>/g, "")}\n\nSecond paragraph with a line break.\n\ncode  line 1\n  line 2`
    )
  })

  it("keeps a section whose id only sounds like boilerplate", () => {
    const page = doc(`<title>Lexical analysis</title>`, `<main><h1>Lexical analysis</h1>${prose}<section id="comments"><h2>Comments</h2><p>A comment starts with a hash character.</p></section></main>`)
    expect(page.text).toContain("Comments\n\nA comment starts with a hash character.")
  })

  it("reads the declared language as a BCP 47 tag", () => {
    expect(htmlToDocument(`<html lang="pt_br"><body>${prose}</body></html>`, URL_).lang).toBe("pt-BR")
    expect(doc(`<meta http-equiv="content-language" content="de, en">`, prose).lang).toBe("de")
    expect(doc(`<meta property="og:locale" content="fr_FR">`, prose).lang).toBe("fr-FR")
    expect(doc(``, prose).lang).toBeUndefined()
  })
})

describe("pages that are barely HTML", () => {
  const messy = [
    "",
    "just text, no tags at all",
    "<html><body></body></html>",
    "<frameset><frame src='a.html'></frameset>",
    "<div><div><div><p>unclosed <b>bold <i>italic</div></span></table>",
    "<div>".repeat(20_000) + "deep" + "</div>".repeat(3),
    "<html><head><title>T</title><script type='application/ld+json'>{not json</script></head><body><p>x</p></body></html>",
    "<p>\u0000\uFFFD\uD800 broken surrogates and nulls</p>",
    "<img src='javascript:alert(1)'><img srcset=',,, ,'><img src='http://[::1'><a href='http://%zz'>x</a>",
    "<svg><title>svg title</title></svg><math><mi>x</mi></math><template><p>hidden</p></template>",
    "<?xml version='1.0'?><!DOCTYPE html><html xmlns='http://www.w3.org/1999/xhtml'><body><p>xhtml</p></body></html>",
    "<html><body><p>inside</p></body></html><p>after the end</p>"
  ]
  it("never throws, and gives a document whose text is empty when nothing is readable", () => {
    for (const html of messy) {
      const page = extractPage(html, "https://example.com/messy")
      expect(typeof page.document.title).toBe("string")
      expect(page.document.url).toBe("https://example.com/messy")
    }
    expect(htmlToDocument("", "https://example.com/empty").text).toBe("")
    expect(htmlToDocument("<frameset><frame src='a.html'></frameset>", "https://example.com/f").text).toBe("")
    expect(htmlToDocument(messy[5]!, "https://example.com/deep").text).toBe("deep")
  })

  it("puts content where a browser would when <html>, <head> or <body> tags are missing", () => {
    expect(htmlToDocument("<title>T</title><p>First paragraph.</p>", URL_)).toMatchObject({ title: "T", text: "First paragraph." })
    expect(htmlToDocument("<html><head><title>T</title></head><p>No body tag.</p></html>", URL_).text).toBe("No body tag.")
    expect(htmlToDocument("<html><body><p>inside</p></body></html><p>after the end</p>", URL_).text).toBe("inside\n\nafter the end")
    expect(htmlToDocument("plain words", URL_).text).toBe("plain words")
  })

  it("decodes bytes in the encoding the page declares", () => {
    const latin1 = new Uint8Array([...new TextEncoder().encode("<meta charset=iso-8859-1><p>caf"), 0xe9, ...new TextEncoder().encode("</p>")])
    expect(decodeHtml(latin1)).toContain("café")
    expect(decodeHtml(new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]))).toBe("hi")
    const shiftJis = new Uint8Array([0x93, 0xfa, 0x96, 0x7b])
    expect(decodeHtml(shiftJis, "text/html; charset=Shift_JIS")).toBe("日本")
    expect(decodeHtml(new TextEncoder().encode("<meta charset=bogus>ok"))).toBe("<meta charset=bogus>ok")
  })
})

describe("sitemaps", () => {
  it("lists pages or sitemaps, resolved against the sitemap's URL", () => {
    expect(parseSitemap(`<urlset><url><loc>/a</loc></url><url><loc>ftp://x/</loc></url></urlset>`, "https://s.example/sitemap.xml"))
      .toEqual({ pages: ["https://s.example/a"], sitemaps: [], lastmod: new Map() })
    expect(parseSitemap(`<sitemapindex><sitemap><loc>https://s.example/s1.xml</loc></sitemap></sitemapindex>`, "https://s.example/"))
      .toEqual({ pages: [], sitemaps: ["https://s.example/s1.xml"], lastmod: new Map() })
    expect(parseSitemap(`<urlset><url><loc>/a</loc><lastmod> 2021-06-01 </lastmod></url><url><loc>/b</loc></url></urlset>`, "https://s.example/sitemap.xml"))
      .toEqual({ pages: ["https://s.example/a", "https://s.example/b"], sitemaps: [], lastmod: new Map([["https://s.example/a", "2021-06-01"]]) })
    expect(parseSitemap(`<html></html>`, "https://s.example/")).toEqual({ error: "expected <urlset> or <sitemapindex>, found <html>" })
  })
})
