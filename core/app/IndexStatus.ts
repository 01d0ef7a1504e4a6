/**
 * What the local index holds now and how often it was reloaded: read by
 * /readyz and exported as periscope_index_documents, periscope_index_images and
 * periscope_index_reloads_total{outcome}. The engine's loader reports to it;
 * backends without a snapshot (fixture, embedded layers) report nothing and are
 * ready as soon as they are built.
 */
import { Context, Effect, Layer, Metric } from "effect"

const documentsGauge = Metric.gauge("periscope_index_documents", { description: "Documents in the local index now" })
const imagesGauge = Metric.gauge("periscope_index_images", { description: "Images in the local index now" })
const reloads = (outcome: string) =>
  Metric.counter("periscope_index_reloads_total", {
    description: "Reloads of the local index (ok: swapped in; refused: the current index kept)",
    incremental: true,
    attributes: { outcome }
  })
const reloadedOk = reloads("ok")
const reloadRefused = reloads("refused")

export interface IndexSnapshotInfo {
  readonly documents: number
  readonly images: number
}

export class IndexStatus extends Context.Service<IndexStatus, {
  /** Whether this backend loads a snapshot (and so is not ready until it has). */
  readonly expectsSnapshot: boolean
  /** The index being served, once loaded. */
  readonly current: Effect.Effect<IndexSnapshotInfo | undefined>
  loaded(info: IndexSnapshotInfo): Effect.Effect<void>
  reloaded(info: IndexSnapshotInfo): Effect.Effect<void>
  readonly reloadRefused: Effect.Effect<void>
}>()("periscope/app/IndexStatus") {
  static readonly layer = (expectsSnapshot: boolean): Layer.Layer<IndexStatus> =>
    Layer.sync(IndexStatus, () => {
      let current: IndexSnapshotInfo | undefined
      const set = (info: IndexSnapshotInfo) =>
        Effect.andThen(
          Effect.sync(() => {
            current = info
          }),
          Effect.andThen(Metric.update(documentsGauge, info.documents), Metric.update(imagesGauge, info.images))
        )
      return IndexStatus.of({
        expectsSnapshot,
        current: Effect.sync(() => current),
        loaded: set,
        reloaded: (info) => Effect.andThen(set(info), Metric.update(reloadedOk, 1)),
        reloadRefused: Metric.update(reloadRefused, 1)
      })
    })
}
