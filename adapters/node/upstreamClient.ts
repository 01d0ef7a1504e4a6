/**
 * The upstream client of the Node server: the same OpenAI-compatible client
 * as everywhere, over Undici's dispatcher instead of fetch. Measured here, a
 * whole completion through it is about 2.4 times faster than through fetch
 * (WHATWG streams and Request objects cost more than the request itself).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { OpenAiUpstream } from "../../core/backends/openai/OpenAiUpstream.ts"

export const NodeUpstreamClient = OpenAiUpstream.layer.pipe(Layer.provide(NodeHttpClient.layerUndici))
