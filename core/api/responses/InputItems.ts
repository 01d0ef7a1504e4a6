/**
 * The Responses API's `input` items as this server reads them: messages (a client's, and an
 * assistant's from an earlier answer), function calls and their outputs, and the items an
 * earlier answer held that change nothing in the next one (web_search_call, reasoning). Items
 * are open: a client echoes an earlier answer's items back with fields this server ignores.
 */
import { Schema } from "effect"
import { ruledString } from "../../schema/Rules.ts"
import { decodeEach, type PathDecoder, pathDecoder, typedDecoder } from "./TypedDecoder.ts"

const { optionalKey } = Schema

const aString = ruledString("must be a string")
const nullableString = optionalKey(Schema.NullOr(aString).annotate({ message: "must be a string or null" }))

// --- content parts ------------------------------------------------------------

export const InputTextPart = Schema.Struct({ type: Schema.Literal("input_text"), text: aString })
export const InputImagePart = Schema.Struct({
  type: Schema.Literal("input_image"),
  image_url: nullableString,
  file_id: nullableString,
  detail: optionalKey(Schema.Literals(["low", "high", "auto", "original"]).annotate({ message: "must be low, high, auto or original" }))
})
/** An assistant's text from an earlier answer (its annotations are not read). */
export const OutputTextPart = Schema.Struct({ type: Schema.Literal("output_text"), text: aString })
export const RefusalPart = Schema.Struct({ type: Schema.Literal("refusal"), refusal: aString })

export type ContentPart = typeof InputTextPart.Type | typeof InputImagePart.Type | typeof OutputTextPart.Type | typeof RefusalPart.Type

const CONTENT_PART_RULE = "must be a content part {type: \"input_text\", text} or {type: \"input_image\", image_url} (output_text and refusal for an assistant's)"

const contentPart: PathDecoder<ContentPart> = typedDecoder<ContentPart>({
  members: {
    input_text: pathDecoder(InputTextPart),
    input_image: pathDecoder(InputImagePart),
    output_text: pathDecoder(OutputTextPart),
    refusal: pathDecoder(RefusalPart)
  },
  refused: {
    input_file: "input_file is not supported here: send the file's text as an input_text part",
    input_audio: "input_audio is not supported here"
  },
  rule: CONTENT_PART_RULE
})

/** The content parts of a message, for the document. */
const ContentPartDoc = Schema.Union([InputTextPart, InputImagePart, OutputTextPart, RefusalPart])

// --- items --------------------------------------------------------------------

const ITEM_STATUS = Schema.Literals(["in_progress", "completed", "incomplete"]).annotate({ message: "must be in_progress, completed or incomplete" })
const ROLE_RULE = "must be user, assistant, system or developer"

const messageFields = {
  type: optionalKey(Schema.Literal("message")),
  role: Schema.Literals(["user", "assistant", "system", "developer"]).annotate({ message: ROLE_RULE }),
  id: optionalKey(aString),
  status: optionalKey(ITEM_STATUS),
  phase: optionalKey(Schema.NullOr(Schema.Literals(["commentary", "final_answer"])).annotate({ message: "must be commentary, final_answer or null" }))
}
const CONTENT_RULE = "must be a string or an array of content parts"
/** A message as decoded: its parts are decoded one by one (contentPart). */
const MessageShape = Schema.Struct({
  ...messageFields,
  content: Schema.Union([aString, Schema.Array(Schema.Unknown)]).annotate({ message: CONTENT_RULE })
})
const MessageDoc = Schema.Struct({ ...messageFields, content: Schema.Union([Schema.String, Schema.Array(ContentPartDoc)]) })

export interface MessageItem extends Omit<typeof MessageShape.Type, "content"> {
  readonly content: string | ReadonlyArray<ContentPart>
}

export const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  call_id: aString,
  name: aString,
  arguments: ruledString("must be a string of JSON text"),
  id: optionalKey(aString),
  status: optionalKey(ITEM_STATUS)
})
export type FunctionCallItem = typeof FunctionCallItem.Type

const OUTPUT_RULE = "must be a string or an array of content parts"
const functionCallOutputFields = {
  type: Schema.Literal("function_call_output"),
  call_id: aString,
  id: optionalKey(Schema.NullOr(aString)),
  status: optionalKey(Schema.NullOr(ITEM_STATUS))
}
const FunctionCallOutputShape = Schema.Struct({
  ...functionCallOutputFields,
  output: Schema.Union([aString, Schema.Array(Schema.Unknown)]).annotate({ message: OUTPUT_RULE })
})
const FunctionCallOutputDoc = Schema.Struct({ ...functionCallOutputFields, output: Schema.Union([Schema.String, Schema.Array(ContentPartDoc)]) })

export interface FunctionCallOutputItem extends Omit<typeof FunctionCallOutputShape.Type, "output"> {
  readonly output: string | ReadonlyArray<ContentPart>
}

/** Items of an earlier answer that the next answer does not need (its search, its reasoning): accepted and left out. */
const SearchCallItem = Schema.Struct({ type: Schema.Literal("web_search_call") })
const ReasoningItem = Schema.Struct({ type: Schema.Literal("reasoning") })
export type PassedItem = typeof SearchCallItem.Type | typeof ReasoningItem.Type

export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | PassedItem

/** An item's content parts, each decoded at its place. */
const withParts = <A extends object, K extends keyof A>(decodeShape: PathDecoder<A>, key: K) =>
(input: unknown, path: string) => {
  const shape = decodeShape(input, path)
  if (shape._tag === "Failure") return shape
  const value = shape.success[key]
  if (typeof value === "string") return shape
  const parts = decodeEach(value as ReadonlyArray<unknown>, `${path}.${String(key)}`, contentPart)
  return parts._tag === "Failure" ? parts : { ...shape, success: { ...shape.success, [key]: parts.success } }
}

const STORED_ONLY = "needs a stored response, and this server stores none: send the items themselves"
const NOT_SERVED = (type: string) => `${type} items are not supported here (message, function_call and function_call_output are)`

/** One input item at its place (`input[3]`). */
export const inputItem: PathDecoder<InputItem> = typedDecoder<InputItem>({
  members: {
    message: withParts(pathDecoder(MessageShape), "content") as PathDecoder<MessageItem>,
    function_call: pathDecoder(FunctionCallItem),
    function_call_output: withParts(pathDecoder(FunctionCallOutputShape), "output") as PathDecoder<FunctionCallOutputItem>,
    web_search_call: pathDecoder(SearchCallItem),
    reasoning: pathDecoder(ReasoningItem)
  },
  refused: Object.fromEntries([
    ["item_reference", `item_reference ${STORED_ONLY}`],
    ...["file_search_call", "computer_call", "computer_call_output", "image_generation_call", "code_interpreter_call", "local_shell_call",
      "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output", "mcp_list_tools",
      "mcp_approval_request", "mcp_approval_response", "mcp_call", "custom_tool_call", "custom_tool_call_output", "compaction",
      "tool_search_call", "tool_search_output"].map((type) => [type, NOT_SERVED(type)])
  ]),
  // EasyInputMessage: {role, content} with no type.
  untyped: "message",
  rule: "must be an input item: a message {role, content}, a function_call or a function_call_output"
})

/** The input items, for the document (the decoder reads them with inputItem). */
export const InputItemDoc = Schema.Union([MessageDoc, FunctionCallItem, FunctionCallOutputDoc, SearchCallItem, ReasoningItem]).annotate({ identifier: "ResponseInputItem" })
