/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and prints the functions with the most self time,
 * and the most total time (self plus callees), as percentages of the samples.
 *
 * Run: node test/bench/support/profileSummary.ts <file.cpuprofile> [top N]
 */
import { readFileSync } from "node:fs"
import { basename } from "node:path"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
}

const [path, topArg] = process.argv.slice(2)
if (path === undefined) throw new Error("usage: profileSummary.ts <file.cpuprofile> [top N]")
const top = Number(topArg ?? 25)
const profile = JSON.parse(readFileSync(path, "utf8")) as Profile
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const name = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"} ${basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`
const self = new Map<string, number>()
const total = new Map<string, number>()
for (const id of profile.samples) {
  const node = byId.get(id)!
  self.set(name(node), (self.get(name(node)) ?? 0) + 1)
  const seen = new Set<string>()
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const key = name(byId.get(at)!)
    if (seen.has(key)) continue
    seen.add(key)
    total.set(key, (total.get(key) ?? 0) + 1)
  }
}
const samples = profile.samples.length
const print = (title: string, counts: Map<string, number>) => {
  console.log(`\n${title} (${samples} samples)`)
  for (const [key, count] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * count) / samples).toFixed(1).padStart(5)}%  ${key}`)
  }
}
print("self time", self)
print("total time", total)
