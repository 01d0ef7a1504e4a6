/**
 * A bench's figures as a plain-text table: each column as wide as its widest cell, the first
 * left-aligned and the others right-aligned (numbers), with a line of dashes under the header
 * when `rule` is set.
 */
export const alignedTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, options: { readonly rule?: boolean } = {}): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  const lines = [line(header)]
  if (options.rule === true) lines.push(widths.map((w) => "-".repeat(w)).join("  "))
  for (const r of rows) lines.push(line(r))
  return lines.join("\n")
}
