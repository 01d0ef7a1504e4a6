/** One analyzer per language analysis, made when first asked for, all with the same options. */
import { Analyzer, type AnalyzerOptions } from "./Analyzer.ts"
import type { LanguageAnalysis } from "./LanguageAnalysis.ts"

export class Analyzers {
  private readonly options: Omit<AnalyzerOptions, "language">
  private readonly byName = new Map<string, Analyzer>()

  constructor(options: Omit<AnalyzerOptions, "language">) {
    this.options = options
  }

  /** The analyzer of `analysis`. */
  of(analysis: LanguageAnalysis): Analyzer {
    let analyzer = this.byName.get(analysis.name)
    if (analyzer === undefined) {
      analyzer = new Analyzer({ ...this.options, language: analysis })
      this.byName.set(analysis.name, analyzer)
    }
    return analyzer
  }

  /** Forgets every analyzer's memoised words. */
  clearCaches(): void {
    for (const analyzer of this.byName.values()) analyzer.clearCache()
  }
}
