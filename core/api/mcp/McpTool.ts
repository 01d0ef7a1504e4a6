/**
 * What an MCP tool is to the protocol (McpProtocol): its listing (name, schemas,
 * annotations) and a call from decoded arguments to an outcome. Tools are thin
 * faces over the services the REST API uses (McpTools); the protocol knows
 * nothing of search or chat.
 */
import type { Effect, Result } from "effect"
import type { InvalidInput } from "../../schema/InvalidInput.ts"

/** A JSON Schema object, as tools/list shows it. */
export type JsonSchemaObject = Readonly<Record<string, unknown>>

/** The protocol's tool annotations: hints a client shows or uses to decide on confirmation. */
export interface ToolAnnotations {
  readonly title: string
  readonly readOnlyHint: boolean
  readonly destructiveHint: boolean
  readonly idempotentHint: boolean
  readonly openWorldHint: boolean
}

/**
 * A call's outcome: `text` for the model to read, `structured` the same data for programs
 * (shown as structuredContent, checked against the tool's outputSchema), `isError` when the
 * tool failed in a way the model should see and act on (a refused address, no results).
 */
export interface ToolOutcome {
  readonly text: string
  readonly structured?: Readonly<Record<string, unknown>> | undefined
  readonly isError: boolean
}

/** What a running call may do besides answering: report progress (sent when the client asked for it). */
export interface ToolCallContext {
  readonly progress: (message: string) => Effect.Effect<void>
}

export interface McpToolSpec<R> {
  readonly name: string
  readonly description: string
  readonly annotations: ToolAnnotations
  readonly inputSchema: JsonSchemaObject
  readonly outputSchema?: JsonSchemaObject | undefined
  /** Decodes the call's `arguments`; a failure names the argument and the rule (JSON-RPC -32602). */
  readonly decode: (args: unknown) => Result.Result<unknown, InvalidInput>
  /** Runs the call on decoded arguments. An argument only the service can judge (a `sources` name) fails with InvalidInput too. */
  readonly call: (args: any, context: ToolCallContext) => Effect.Effect<ToolOutcome, InvalidInput, R>
}
