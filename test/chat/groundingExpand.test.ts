/**
 * chat.grounding.expand: the search grounded chat makes from the user's message is expanded by
 * the local index (query expansion), over the real engine, federation and grounding.
 */
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { defaultGroundingSettings, Grounding } from "../../core/chat/Grounding.ts"
import { SourceRegistry } from "../../core/chat/GroundingSources.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { FederatedSearch } from "../../core/search/FederatedSearch.ts"
import { ResultCache } from "../../core/store/ResultCache.ts"

const page = (path: string, title: string, text: string) => ({ url: `https://docs.example.org/${path}`, title, text })
const filler = ["garden", "river", "music", "bread", "winter", "harbour", "copper", "violin", "meadow", "lantern", "pepper", "canyon"]
const builder = new IndexBuilder()
builder.add([
  page("howto/sorting", "Sorting HOWTO", "Sorting a list: sorted returns a new list ordered by a key function; the comparison uses each element's key."),
  page("library/list-sort", "list.sort", "The sort method orders the list in place; pass a key function and reverse to change the order."),
  page("library/sorted", "sorted", "sorted takes any iterable and a key function and returns a new sorted list in ascending order."),
  page("howto/key-functions", "Key functions", "A key function maps each element to the value compared: a lambda is the usual key, and the order follows it."),
  ...Array.from({ length: 60 }, (_, i) => page(`misc/${i}`, `Note ${i}`, Array.from({ length: 12 }, (_, k) => filler[(i * 7 + k * 5) % filler.length]).join(" ")))
])
const search = FederatedSearch.layer([]).pipe(Layer.provide(EngineSearch.layer(builder.build())), Layer.provide(ResultCache.layerNone))

const sources = (expand: boolean) =>
  Effect.runPromise(Effect.gen(function*() {
    const grounding = yield* Grounding
    const registry = new SourceRegistry()
    const retrieval = yield* grounding.retrieve("How do I sort a list?", "high", undefined, registry)
    expect(retrieval.status).toBe("ok")
    return registry.sources.map((s) => s.url)
  }).pipe(Effect.provide(Grounding.layer({ ...defaultGroundingSettings, expand }).pipe(Layer.provide(search)))))

describe("grounding's retrieval with expand", () => {
  it("finds the page in other words than the question's only when set", async () => {
    expect(await sources(false)).not.toContain("https://docs.example.org/howto/key-functions")
    expect(await sources(true)).toContain("https://docs.example.org/howto/key-functions")
  })
})
