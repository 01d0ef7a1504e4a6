/**
 * The build's analysis of one page's texts, as a job thread runs it (extractJobs.ts) and as
 * the pool runs it on the main thread once no thread is left: one analyzer per stemming
 * setting, kept, so its memo of words serves page after page.
 */
import { Analyzer } from "../../core/index/analysis/Analyzer.ts"
import { type AnalyzedFields, TokenRecorder } from "../../core/index/analysis/AnalyzedText.ts"

const recorders = new Map<boolean, TokenRecorder>()

export const analyzeTexts = (texts: ReadonlyArray<string>, stemming: boolean): AnalyzedFields => {
  let recorder = recorders.get(stemming)
  if (recorder === undefined) recorders.set(stemming, recorder = new TokenRecorder(new Analyzer({ stemming })))
  return texts.map((text) => recorder.record(text))
}
