/**
 * The paths test/bench/gcPromotion.ts measures, in its table's order: the controls without I/O,
 * the clients bare, then Effect's client, then Periscope's layers. gcPromotionWorker.ts runs each.
 */
export const gcPromotionPaths = [
  "promises, ten async steps (control)",
  "Effect fiber, ten async steps (control)",
  "Effect Stream, map (control)",
  "Effect Stream, flatMap to inner streams",
  "undici request, body.text()",
  "undici request, body.dump()",
  "undici dispatch, own handler",
  "node:http request",
  "Effect HttpClient (Undici), text",
  "Effect HttpClient (Undici), stream",
  "Effect HttpClient (node:http), stream",
  "Periscope's HttpClient (Undici dispatch), text",
  "Periscope's HttpClient (Undici dispatch), stream",
  "chat gateway alone, whole",
  "chat gateway alone, streamed",
  "express lane, whole",
  "express lane, streamed"
] as const

export type GcPromotionPath = (typeof gcPromotionPaths)[number]

export const isGcPromotionPath = (name: string): name is GcPromotionPath => (gcPromotionPaths as ReadonlyArray<string>).includes(name)
