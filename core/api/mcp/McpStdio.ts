/**
 * MCP over stdio: newline-delimited JSON-RPC messages in, one line per
 * response or notification out, for desktop agent hosts that start the server
 * as their own child. Requests are answered concurrently, so a
 * notifications/cancelled can reach a call in flight. The caller is the local
 * user: no key and no rate limit. The adapter gives the input bytes and a line
 * writer (stdout carries nothing but protocol messages).
 */
import { Effect, FiberSet, Stream } from "effect"
import { classify, INVALID_REQUEST, type JsonRpcResponse, type McpCaller, type McpDispatcher, PARSE_ERROR, rpcError } from "./McpProtocol.ts"

export const serveMcpLines = <E>(
  dispatcher: McpDispatcher<never>,
  input: Stream.Stream<Uint8Array, E>,
  writeLine: (line: string) => Effect.Effect<void>
): Effect.Effect<void, E> =>
  Effect.scoped(Effect.gen(function*() {
    const calls = yield* FiberSet.make()
    const send = (message: unknown) => writeLine(JSON.stringify(message))
    const caller: McpCaller = { id: "stdio", notify: send, charge: Effect.void }

    const answer = (message: unknown): Effect.Effect<JsonRpcResponse | undefined> => {
      const incoming = classify(message)
      switch (incoming._tag) {
        case "Request":
          return Effect.map(dispatcher.request(incoming, caller), (answered) => answered === "cancelled" ? undefined : answered)
        case "Notification":
          return Effect.as(dispatcher.notification(incoming, caller), undefined)
        case "Response":
          return Effect.succeed(undefined)
        case "Invalid":
          return Effect.succeed(rpcError(incoming.id, INVALID_REQUEST, incoming.message))
      }
    }

    const line = (text: string): Effect.Effect<void> => {
      if (text.trim() === "") return Effect.void
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch (error) {
        return send(rpcError(null, PARSE_ERROR, `Parse error: ${error instanceof Error ? error.message : "not JSON"}`))
      }
      if (Array.isArray(parsed)) {
        if (parsed.length === 0) return send(rpcError(null, INVALID_REQUEST, "Invalid Request: an empty batch"))
        return Effect.asVoid(FiberSet.run(
          calls,
          Effect.flatMap(Effect.forEach(parsed, answer, { concurrency: "unbounded" }), (answers) => {
            const responses = answers.filter((a): a is JsonRpcResponse => a !== undefined)
            return responses.length === 0 ? Effect.void : send(responses)
          })
        ))
      }
      // Notifications act at once (a cancellation must not wait behind the call it cancels); requests run beside each other.
      const incoming = classify(parsed)
      if (incoming._tag === "Notification") return dispatcher.notification(incoming, caller)
      return Effect.asVoid(FiberSet.run(calls, Effect.flatMap(answer(parsed), (response) => response === undefined ? Effect.void : send(response))))
    }

    yield* input.pipe(Stream.decodeText(), Stream.splitLines, Stream.runForEach(line))
    // The host closed our input: answer what is in flight, then end.
    yield* FiberSet.awaitEmpty(calls)
  }))
