/**
 * One path of test/bench/gcPromotion.ts: sequential requests to the mock upstream (or through
 * Periscope's chat stack to it), in a process started with --trace-gc-nvp, so that the parent can
 * sum the young-generation collections between the "measuring" and "measured" lines this prints.
 *
 *   node --trace-gc-nvp gcPromotionWorker.ts <path> <requests> <upstream base URL>
 */
import { Agent as HttpAgent, request as httpRequest } from "node:http"
import { NodeHttpClient } from "@effect/platform-node"
import { Context, Effect, Fiber, Layer, Scope, Stream } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { Client as UndiciClient, request as undiciRequest } from "undici"
import * as UndiciHttpClient from "../../../adapters/node/undiciHttpClient.ts"
import { benchChatBody, makeBenchChatStack } from "./benchChatStack.ts"
import { type GcPromotionPath, isGcPromotionPath } from "./gcPromotionPaths.ts"

const [path, requestsText, upstreamUrl] = process.argv.slice(2)
if (path === undefined || upstreamUrl === undefined) throw new Error("usage: gcPromotionWorker.ts <path> <requests> <upstream base URL>")
const requests = Number(requestsText)

const chatUrl = `${upstreamUrl}/chat/completions`
const upstreamBody = JSON.stringify({ ...benchChatBody(true), model: "mock-model" })

/** Effect's HttpClient over the transport of `layer`, built once. */
const effectClient = async (layer: Layer.Layer<HttpClient.HttpClient>) => {
  const context = await Effect.runPromise(Layer.build(layer).pipe(Scope.provide(Scope.makeUnsafe())))
  const client = Context.get(context, HttpClient.HttpClient)
  return () => client.execute(HttpClientRequest.post(chatUrl).pipe(HttpClientRequest.bodyText(upstreamBody, "application/json")))
}

/** Requests through the client of `layer`, each body read whole as text. */
const readWhole = async (layer: Layer.Layer<HttpClient.HttpClient>) => {
  const post = await effectClient(layer)
  return () => Effect.runPromise(Effect.flatMap(post(), (response) => response.text))
}

/** Requests through the client of `layer`, each body read as a stream to its end. */
const readStreamed = async (layer: Layer.Layer<HttpClient.HttpClient>) => {
  const post = await effectClient(layer)
  return () => Effect.runPromise(Effect.flatMap(post(), (response) => Stream.runDrain(response.stream)))
}

/** The controls: 64 small objects made at each of ten async steps, with no I/O. */
const stepData = () => Array.from({ length: 64 }, (_, i) => ({ i, text: `word${i}` }))
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

const paths: Record<GcPromotionPath, () => Promise<() => Promise<unknown>>> = {
  "promises, ten async steps (control)": async () => async () => {
    let kept: unknown
    for (let i = 0; i < 10; i++) {
      kept = stepData()
      await nextTurn()
    }
    return kept
  },
  "Effect fiber, ten async steps (control)": async () => () =>
    Effect.runPromise(Effect.gen(function*() {
      let kept: unknown
      for (let i = 0; i < 10; i++) {
        kept = stepData()
        yield* Effect.callback<void>((resume) => {
          setImmediate(() => resume(Effect.void))
        })
      }
      return kept
    })),
  // Eight arrays of 64 objects each made synchronously, then passed on whole or each as an inner stream.
  "Effect Stream, map (control)": async () => () =>
    Effect.runPromise(Stream.runDrain(Stream.fromIterable([0, 1, 2, 3, 4, 5, 6, 7]).pipe(
      Stream.mapEffect(() => Effect.sync(stepData)),
      Stream.map((array) => array)
    ))),
  "Effect Stream, flatMap to inner streams": async () => () =>
    Effect.runPromise(Stream.runDrain(Stream.fromIterable([0, 1, 2, 3, 4, 5, 6, 7]).pipe(
      Stream.mapEffect(() => Effect.sync(stepData)),
      Stream.flatMap((array) => Stream.succeed(array))
    ))),
  "undici request, body.text()": async () => async () => (await undiciRequest(chatUrl, { method: "POST", body: upstreamBody })).body.text(),
  "undici request, body.dump()": async () => async () => (await undiciRequest(chatUrl, { method: "POST", body: upstreamBody })).body.dump(),
  "undici dispatch, own handler": async () => {
    const url = new URL(chatUrl)
    const client = new UndiciClient(url.origin)
    return () =>
      new Promise<void>((resolve, reject) =>
        client.dispatch({ method: "POST", path: url.pathname, body: upstreamBody }, {
          onRequestStart() {},
          onResponseStart() {},
          onResponseData() {},
          onResponseEnd: () => resolve(),
          onResponseError: (_controller: unknown, error: Error) => reject(error)
        }))
  },
  "node:http request": async () => {
    const agent = new HttpAgent({ keepAlive: true })
    return () =>
      new Promise<void>((resolve, reject) => {
        const request = httpRequest(chatUrl, { method: "POST", agent }, (response) => {
          response.on("data", () => {})
          response.on("end", () => resolve())
        })
        request.on("error", reject)
        request.end(upstreamBody)
      })
  },
  "Effect HttpClient (Undici), text": () => readWhole(NodeHttpClient.layerUndici),
  "Effect HttpClient (Undici), stream": () => readStreamed(NodeHttpClient.layerUndici),
  "Effect HttpClient (node:http), stream": () => readStreamed(NodeHttpClient.layerNodeHttp),
  "Periscope's HttpClient (Undici dispatch), text": () => readWhole(UndiciHttpClient.layer),
  "Periscope's HttpClient (Undici dispatch), stream": () => readStreamed(UndiciHttpClient.layer),
  "chat gateway alone, whole": async () => {
    const stack = await makeBenchChatStack(upstreamUrl)
    const request = stack.gatewayRequest(benchChatBody(false))
    return () => Effect.runPromise(stack.chat.complete(request))
  },
  "chat gateway alone, streamed": async () => {
    const stack = await makeBenchChatStack(upstreamUrl)
    const request = stack.gatewayRequest(benchChatBody(true))
    return () => Effect.runPromise(Stream.runDrain(stack.chat.stream(request)))
  },
  "express lane, whole": async () => {
    const stack = await makeBenchChatStack(upstreamUrl)
    return async () => {
      const answer = await stack.answerInLane(benchChatBody(false))
      if (answer._tag !== "Json" || answer.status !== 200) throw new Error(`the lane answered ${answer._tag === "Json" ? `${answer.status}: ${answer.body}` : "a stream"}`)
    }
  },
  "express lane, streamed": async () => {
    const stack = await makeBenchChatStack(upstreamUrl)
    return async () => {
      const answer = await stack.answerInLane(benchChatBody(true))
      if (answer._tag === "Json") throw new Error(`the lane answered ${answer.status}: ${answer.body}`)
      await Effect.runPromise(Fiber.join(stack.lane.fork(Stream.runDrain(answer.events))))
    }
  }
}

if (!isGcPromotionPath(path)) throw new Error(`unknown path ${JSON.stringify(path)}; one of: ${Object.keys(paths).join(", ")}`)
const run = await paths[path]()
for (let i = 0; i < 300; i++) await run()
console.log("measuring")
for (let i = 0; i < requests; i++) await run()
console.log("measured")
process.exit(0)
