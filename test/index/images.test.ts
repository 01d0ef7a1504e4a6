import { describe, expect, it } from "vitest"
import { buildIndex } from "./support.ts"

const index = buildIndex([
  {
    url: "https://zoo.example/animals",
    title: "Animals of the savanna",
    text: "Lions and zebras live on the savanna.",
    images: [
      { url: "https://zoo.example/img/lion.jpg", alt: "A lion resting", heading: "Big cats" },
      { url: "https://zoo.example/img/zebra.jpg", title: "Zebra herd", caption: "Zebras at the water hole" },
      { url: "https://zoo.example/img/map.png", caption: "Map of the reserve" },
      { url: "https://zoo.example/img/DSC_0042.jpg" }
    ]
  },
  {
    url: "https://blog.example/trip",
    title: "Our safari trip",
    text: "We saw a lion.",
    images: [
      { url: "https://zoo.example/img/lion.jpg", alt: "Lion photo from the zoo" },
      { url: "https://blog.example/giraffe.jpg", alt: "Tall giraffe", heading: "Day two" }
    ]
  }
])

describe("image search", () => {
  it("finds images by alt text, title, caption, heading and page title", () => {
    expect(index.searchImages("zebra", 10).map((i) => i.url)).toEqual(["https://zoo.example/img/zebra.jpg"])
    expect(index.searchImages("water hole", 10).map((i) => i.url)).toEqual(["https://zoo.example/img/zebra.jpg"])
    expect(index.searchImages("big cats", 10).map((i) => i.url)).toEqual(["https://zoo.example/img/lion.jpg"])
    // Both images of the safari page match through its title; the lion is listed with that page.
    const safari = index.searchImages("safari", 10)
    expect(safari.map((i) => i.url).sort()).toEqual(["https://blog.example/giraffe.jpg", "https://zoo.example/img/lion.jpg"])
    expect(safari.every((i) => i.refUrl === "https://blog.example/trip")).toBe(true)
    expect(index.searchImages("DSC_0042", 10).map((i) => i.url)).toEqual(["https://zoo.example/img/DSC_0042.jpg"])
  })

  it("gives the page as refUrl and a title that falls back through title, alt, caption to empty", () => {
    const byUrl = new Map(index.searchImages("savanna", 10).map((i) => [i.url, i]))
    expect(byUrl.get("https://zoo.example/img/zebra.jpg")).toEqual({ url: "https://zoo.example/img/zebra.jpg", refUrl: "https://zoo.example/animals", title: "Zebra herd" })
    expect(byUrl.get("https://zoo.example/img/map.png")?.title).toBe("Map of the reserve")
    expect(byUrl.get("https://zoo.example/img/DSC_0042.jpg")?.title).toBe("")
    for (const image of byUrl.values()) {
      expect(typeof image.title).toBe("string")
      expect(image.refUrl).toBe("https://zoo.example/animals")
    }
  })

  it("lists an image used on two pages once", () => {
    const lions = index.searchImages("lion", 10)
    expect(lions.filter((i) => i.url === "https://zoo.example/img/lion.jpg")).toHaveLength(1)
  })

  it("counts images and answers nothing for unknown words", () => {
    expect(index.imageCount).toBe(6)
    expect(index.searchImages("submarine", 10)).toEqual([])
    expect(index.searchImages("", 10)).toEqual([])
  })
})
