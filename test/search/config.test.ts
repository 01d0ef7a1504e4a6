/**
 * The config file's search section: the examples of docs/providers.md decode and build; bad values
 * name their path; a key variable that is not set stops the start naming the setting.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { FetchHttpClient } from "effect/http"
import { ConfigProvider, Effect, Exit, Layer, Result } from "effect"
import { describe, expect, it } from "vitest"
import { federationLayer, resultCacheLayer } from "../../core/app/SearchBackend.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { FederatedSearch } from "../../core/search/FederatedSearch.ts"
import { decoderFor } from "../../core/schema/Decode.ts"

const decode = decoderFor(ConfigFile, "file")
const providersDoc = readFileSync(resolve(import.meta.dirname, "../../docs/providers.md"), "utf8")

/** Every ```json block of docs/providers.md that has a search section. */
const readmeConfigs = (): Array<unknown> => {
  return [...providersDoc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!)).filter((c) => c.search !== undefined)
}

const env = ConfigProvider.fromUnknown({
  BRAVE_API_KEY: "b", SERPER_API_KEY: "s", TAVILY_API_KEY: "t", EXA_API_KEY: "e", PEER_PERISCOPE_KEY: "p", PEER_KEY: "p", HOSTED_KEY: "x"
})

const build = (search: unknown, provider = env) =>
  Effect.runPromiseExit(
    Effect.map(Effect.service(FederatedSearch), (f) => f.sourceNames).pipe(
      Effect.provide(federationLayer(search as never).pipe(
        Layer.provide(Layer.mergeAll(FixtureSearch.layer(sampleDocuments), resultCacheLayer(search as never), FetchHttpClient.layer))
      )),
      Effect.provide(ConfigProvider.layer(provider))
    )
  )

describe("search section of the config file", () => {
  it("every example of docs/providers.md decodes and builds its providers", async () => {
    const configs = readmeConfigs()
    expect(configs.length).toBeGreaterThanOrEqual(7)
    for (const config of configs) {
      const decoded = decode(config)
      expect(Result.isSuccess(decoded), JSON.stringify(config)).toBe(true)
      const exit = await build((decoded as Result.Success<ConfigFile, never>).success.search)
      expect(Exit.isSuccess(exit), String(Exit.isFailure(exit) ? exit.cause : "")).toBe(true)
    }
    const names = await build((decode(configs[0]) as Result.Success<ConfigFile, never>).success.search)
    expect(Exit.isSuccess(names) && names.value).toEqual(["local", "searx", "brave", "serper", "tavily", "exa", "peer"])
  })

  it("bad values name their path", () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ providers: [{ name: "a", kind: "bing" }] }, /^search\.providers\[0\]\.kind: must be one of searxng, brave, serper, tavily, exa, iflow/],
      [{ providers: [{ name: "a", kind: "brave" }, { name: "a", kind: "exa" }] }, /^search\.providers\[1\]\.name: duplicates the provider name "a"/],
      [{ providers: [{ name: "local", kind: "brave" }] }, /^search\.providers\[0\]\.name: is the local index's name/],
      [{ providers: [{ name: "s", kind: "searxng" }] }, /^search\.providers\[0\]\.baseUrl: is required for kind searxng/],
      [{ providers: [{ name: "p", kind: "iflow" }] }, /^search\.providers\[0\]\.baseUrl: is required for kind iflow/],
      [{ providers: [{ name: "b", kind: "brave", baseUrl: "ftp://x" }] }, /^search\.providers\[0\]\.baseUrl: must be an http\(s\) URL/],
      [{ providers: [{ name: "b", kind: "brave", apiKeyEnv: "not a var" }] }, /^search\.providers\[0\]\.apiKeyEnv: must be an environment variable name/],
      [{ providers: [{ name: "b", kind: "brave", weight: -1 }] }, /^search\.providers\[0\]\.weight: must be a number from 0 to 100/],
      [{ providers: [{ name: "b", kind: "brave", timeoutMs: 0 }] }, /^search\.providers\[0\]\.timeoutMs: must be an integer from 1 to 120000/],
      [{ deadlineMs: "5s" }, /^search\.deadlineMs: must be an integer from 1 to 120000/],
      [{ cache: { ttlSeconds: { day: -5 } } }, /^search\.cache\.ttlSeconds\.day: must be an integer from 0 to 604800/],
      [{ warmUpMs: -1 }, /^search\.warmUpMs: must be an integer from 0 to 60000/],
      [{ warmUpMs: 60_001 }, /^search\.warmUpMs: must be an integer from 0 to 60000/],
      [{ warmUpMs: 2.5 }, /^search\.warmUpMs: must be an integer from 0 to 60000/],
      [{ warmUpMs: "1500" }, /^search\.warmUpMs: must be an integer from 0 to 60000/]
    ]
    for (const [search, message] of cases) {
      const decoded = decode({ search })
      expect(Result.isFailure(decoded), JSON.stringify(search)).toBe(true)
      expect((decoded as unknown as Result.Failure<never, { message: string }>).failure.message).toMatch(message)
    }
  })

  it("a key variable that is not set stops the start naming the setting, not the key", async () => {
    const exit = await build({ providers: [{ name: "b", kind: "brave" }, { name: "t", kind: "tavily", apiKeyEnv: "NOT_SET_TAVILY_KEY" }] }, ConfigProvider.fromUnknown({}))
    expect(Exit.isFailure(exit)).toBe(true)
    const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail") : undefined
    expect(error?._tag === "Fail" && error.error).toMatchObject({ _tag: "SettingsError", setting: "search.providers[1].apiKeyEnv", message: "names NOT_SET_TAVILY_KEY, which is not set" })
  })
})
