/**
 * No function literal is written straight to a property inside a function (`obj.f = () => ...`).
 * V8's parser marks such a literal "pretenure" (it takes it for a method being installed), so
 * each closure made there is born in the old generation. Made per request, a dead one still
 * reaches its context until the next full collection, and every young object that context
 * reaches survives each scavenge and is promoted: one such closure in the HTTP client made 37%
 * of a whole-read response's allocation outlive young collections (`node test/bench/gcPromotion.ts
 * --only "text"`: 7% without it). Through a local (`const f = () => ...; obj.f = f`) the closure
 * is an ordinary young one. The rule is read from the parsed source of core/ and adapters/.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { join, relative, resolve } from "node:path"
import type * as TypeScript from "typescript-6"
import { describe, expect, it } from "vitest"

// TypeScript 7's package has no JavaScript API; 6 (the devDependency alias) parses the same syntax.
const ts = createRequire(import.meta.url)("typescript-6") as typeof TypeScript

const root = resolve(import.meta.dirname, "../..")

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : []
  })

const assignments = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken
])

/** Parentheses and type syntax leave no trace in V8's syntax tree. */
const bare = (node: TypeScript.Expression): TypeScript.Expression => {
  let e = node
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isNonNullExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression
  return e
}

const insideFunction = (node: TypeScript.Node): boolean => {
  for (let p = node.parent; p !== undefined; p = p.parent) if (ts.isFunctionLike(p)) return true
  return false
}

/** Lines ("name:line: text") where a function literal is written to a property inside a function. */
export const closureStores = (name: string, text: string): Array<string> => {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true)
  const found: Array<string> = []
  const visit = (node: TypeScript.Node) => {
    if (ts.isBinaryExpression(node) && assignments.has(node.operatorToken.kind)) {
      const target = bare(node.left)
      const value = bare(node.right)
      if ((ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target)) && (ts.isArrowFunction(value) || ts.isFunctionExpression(value)) && insideFunction(node)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1
        found.push(`${name}:${line}: ${node.getText().split("\n")[0]}`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe("closures written to properties", () => {
  it("finds none in core/ and adapters/", () => {
    const found = [...sources(join(root, "core")), ...sources(join(root, "adapters"))].flatMap((file) =>
      closureStores(relative(root, file), readFileSync(file, "utf8")))
    expect(found, "write the function literal to a local first, then the local to the property").toEqual([])
  })

  it("sees the forms V8 pretenures, and not the ones it does not", () => {
    const flagged = closureStores("x.ts", [
      "const f = (o: any, k: string) => {",
      "  o.a = () => 1",
      "  o[k] = function () {}",
      "  o.b ??= (x: number) => x",
      "  o.c = ((y: number) => y) as unknown",
      "  const local = () => 2",
      "  o.d = local",
      "  o.e = { g: () => 3 }",
      "  o.h = (0, () => 4)",
      "}",
      "exports.top = () => 5"
    ].join("\n"))
    expect(flagged.map((line) => line.split(":")[1])).toEqual(["2", "3", "4", "5"])
  })
})
