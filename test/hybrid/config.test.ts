/**
 * search.embeddings and search.reranker in the config file: the example of docs/hybrid.md
 * decodes; bad values are refused naming the field and the rule; a key variable that is not
 * set stops the start naming the setting.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { ConfigProvider, Effect, Exit, Layer, Result } from "effect"
import { FetchHttpClient } from "effect/http"
import { describe, expect, it } from "vitest"
import { modelServersOf } from "../../core/app/EmbeddingStack.ts"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { decoderFor } from "../../core/schema/Decode.ts"

const decode = decoderFor(ConfigFile, "file", { unknownKeys: "error" })
const failure = (config: unknown): string => {
  const decoded = decode(config)
  if (Result.isSuccess(decoded)) throw new Error("expected a refusal")
  return (decoded.failure as { message: string }).message
}

describe("search.embeddings and search.reranker", () => {
  it("decode the example of docs/hybrid.md", () => {
    const doc = readFileSync(resolve(import.meta.dirname, "../../docs/hybrid.md"), "utf8")
    const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!)).filter((c) => c.search !== undefined)
    expect(examples.length).toBeGreaterThan(0)
    for (const example of examples) expect(Result.isSuccess(decode(example))).toBe(true)
  })

  it("refuse bad values naming the field and the rule", () => {
    const embeddings = { baseUrl: "http://127.0.0.1:11434/v1", model: "nomic-embed-text" }
    expect(failure({ search: { embeddings: { ...embeddings, baseUrl: "ftp://x" } } })).toMatch(/search\.embeddings\.baseUrl.*must be an http\(s\) URL/)
    expect(failure({ search: { embeddings: { baseUrl: embeddings.baseUrl } } })).toMatch(/search\.embeddings\.model/)
    expect(failure({ search: { embeddings: { ...embeddings, vectorWeight: 2 } } })).toMatch(/search\.embeddings\.vectorWeight.*must be a number from 0 to 1/)
    expect(failure({ search: { embeddings: { ...embeddings, fusion: "max" } } })).toMatch(/search\.embeddings\.fusion.*must be rrf or weighted/)
    expect(failure({ search: { embeddings: { ...embeddings, batchSize: 0 } } })).toMatch(/search\.embeddings\.batchSize.*must be an integer from 1 to 2048/)
    expect(failure({ search: { embeddings: { ...embeddings, apiKeyEnv: "not a name" } } })).toMatch(/search\.embeddings\.apiKeyEnv.*must be an environment variable name/)
    expect(failure({ search: { reranker: { url: "http://x/rerank", api: "jina" } } })).toMatch(/search\.reranker\.api.*must be cohere or tei/)
    expect(failure({ search: { reranker: { url: "http://x/rerank", topK: 1 } } })).toMatch(/search\.reranker\.topK.*must be an integer from 2 to 200/)
    expect(failure({ search: { embeddings: { ...embeddings, unknownKey: 1 } } })).toMatch(/unknownKey/)
  })

  it("stop the start when a key variable is not set, naming the setting", async () => {
    const exit = await Effect.runPromiseExit(
      Layer.build(modelServersOf({ embeddings: { baseUrl: "http://127.0.0.1:1/v1", model: "m", apiKeyEnv: "PERISCOPE_TEST_UNSET_EMBED_KEY" } })).pipe(
        Effect.provide(FetchHttpClient.layer),
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))),
        Effect.scoped
      )
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(Exit.isFailure(exit) ? exit.cause : "")).toMatch(/names PERISCOPE_TEST_UNSET_EMBED_KEY, which is not set/)
  })
})
