/**
 * Ranking helpers that go wrong, for sharedRanking.test.ts: one takes the first query posted
 * and fails it ("fail"), one takes it and never answers ("stall"), and one ranks as the real
 * helper does but pauses 30 ms after each chunk it publishes ("slow": the answering thread gives
 * up on it and merges what it published).
 */
import { workerData } from "node:worker_threads"
import { type RankingArrays, serveRanking } from "../../core/index/HelperThread.ts"
import { type RankedPairs, RankingChannel } from "../../core/index/RankingChannel.ts"

const { buffer, mode, arrays } = workerData as { buffer: SharedArrayBuffer; mode: "fail" | "stall" | "slow"; arrays: RankingArrays }
// Short waits, so that terminating the thread takes effect between them.
const never = new Int32Array(new SharedArrayBuffer(4))
const pause = (ms: number) => Atomics.wait(never, 0, 0, ms)

class SlowChannel extends RankingChannel {
  override publish(pairs: RankedPairs, held: number): boolean {
    const published = super.publish(pairs, held)
    pause(30)
    return published
  }
}

if (mode === "slow") serveRanking(new SlowChannel(buffer), arrays)
else {
  const channel = new RankingChannel(buffer)
  if (channel.take() !== undefined) {
    if (mode === "fail") channel.done(true)
    else for (;;) pause(50)
  }
}
