/** A small but varied document set: several hosts, dates, images, CJK and accented text. */
import type { IndexDocument } from "../../core/index/Document.ts"

export const sampleDocuments: ReadonlyArray<IndexDocument> = [
  {
    url: "https://docs.python.org/3/library/asyncio.html",
    title: "asyncio — Asynchronous I/O",
    text: "asyncio is a library to write concurrent code using the async/await syntax.\n\nThe event loop is the core of every asyncio application.",
    date: "2024-03-01",
    lang: "en",
    images: [{ url: "https://docs.python.org/3/_images/loop.png", alt: "Event loop diagram", width: 640, height: 480 }]
  },
  {
    url: "https://nodejs.org/en/learn/event-loop",
    title: "The Node.js Event Loop",
    text: "The event loop is what allows Node.js to perform non-blocking I/O operations. HTTP/2 servers run on it too.",
    date: "2023-11-20T08:30:00Z"
  },
  {
    url: "https://ja.example.org/検索",
    title: "検索エンジンの仕組み",
    text: "検索エンジンは文書を索引に登録し、キーワードで検索します。東京の天気も調べられます。",
    lang: "ja",
    images: [{ url: "https://ja.example.org/img/index.png", caption: "索引の図", heading: "索引" }]
  },
  {
    url: "https://fr.example.org/cafe",
    title: "Le café crème",
    text: "Un café crème est préparé avec du lait chaud. Crème brûlée is a dessert."
  },
  {
    url: "https://cpp.example.com/templates",
    title: "C++ templates and C# generics",
    text: "Templates in C++ are instantiated at compile time; C# generics at run time. Both use UTF-8 source files.",
    images: [{ url: "https://cpp.example.com/t.svg" }]
  }
]

export const sampleQueries: ReadonlyArray<string> = [
  "event loop", "asyncio", "\"event loop\"", "node.js", "HTTP/2", "C++", "c#", "utf-8", "cafe", "café crème", "検索", "東京 天気",
  "event loop -node.js", "loop site:python.org", "loop site:nodejs.org", "diagram", "索引", "templates generics", "", "zzz nothing"
]
