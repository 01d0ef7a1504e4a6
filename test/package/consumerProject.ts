/**
 * A fresh project outside the checkout that installs the packed tarball the
 * way a user would (`npm ci`), offline: the registry's package documents
 * are not in npm's cache after our own install, only the tarballs, so the
 * project gets a lock file cut from ours (the packages the tarball and
 * the consumer's TypeScript need, with their resolved URLs and integrity) and
 * npm takes every tarball from its cache.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

export const root = resolve(import.meta.dirname, "../..")
export const nodeBin = resolve(root, ".ci/node/node_modules/.bin")
/** PATH with the project's Node 24 first: the child processes of these tests run on it. */
export const env = { ...process.env, PATH: `${nodeBin}:${process.env.PATH ?? ""}`, npm_config_update_notifier: "false" }

interface LockEntry {
  version?: string
  resolved?: string
  integrity?: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
  [key: string]: unknown
}

const readJson = <A>(file: string): A => JSON.parse(readFileSync(file, "utf8")) as A

/**
 * `npm pack` in the checkout (runs `prepack`, the build); the tarball's path.
 * PERISCOPE_TEST_TARBALL names one packed before, to iterate on these tests.
 */
export const packTarball = (into: string): string => {
  const given = process.env.PERISCOPE_TEST_TARBALL
  if (given !== undefined && given !== "") return given
  execFileSync("npm", ["pack", "--pack-destination", into, "--no-fund", "--no-audit"], { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] })
  const tgz = readdirSync(into).find((f) => f.endsWith(".tgz"))
  if (tgz === undefined) throw new Error(`npm pack left no tarball in ${into}`)
  return join(into, tgz)
}

/** Lock entries the named packages need, found the way Node resolves them (nested first, then up). */
const closure = (packages: Record<string, LockEntry>, names: ReadonlyArray<string>): Record<string, LockEntry> => {
  const out: Record<string, LockEntry> = {}
  const find = (from: string, name: string): string | undefined => {
    for (let dir = from; ; ) {
      const candidate = `${dir === "" ? "" : `${dir}/`}node_modules/${name}`
      if (packages[candidate] !== undefined) return candidate
      if (dir === "") return undefined
      const at = dir.lastIndexOf("/node_modules/")
      dir = at === -1 ? "" : dir.slice(0, at)
    }
  }
  const visit = (from: string, name: string, optional: boolean) => {
    const path = find(from, name)
    if (path === undefined) {
      if (optional) return
      throw new Error(`package-lock.json has no ${name} for ${from || "the root"}`)
    }
    if (out[path] !== undefined) return
    const { dev: _d, devOptional: _o, peer: _p, ...entry } = packages[path]!
    // Entries npm wrote without a URL (it then asks the registry): the registry's tarball URL.
    const base = name.slice(name.lastIndexOf("/") + 1)
    out[path] = entry.resolved === undefined ? { ...entry, resolved: `https://registry.npmjs.org/${name}/-/${base}-${entry.version}.tgz` } : entry
    for (const dep of Object.keys(entry.dependencies ?? {})) visit(path, dep, false)
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) visit(path, dep, true)
    for (const dep of Object.keys(entry.peerDependencies ?? {})) visit(path, dep, entry.peerDependenciesMeta?.[dep]?.optional === true || true)
  }
  for (const name of names) visit("", name, false)
  return out
}

export interface ConsumerProject {
  readonly dir: string
  readonly tarball: string
  /** Runs a command in the project with Node 24 first on PATH; its stdout. */
  run(command: string, args: ReadonlyArray<string>, options?: { readonly env?: Record<string, string> }): string
}

/**
 * A temporary project with the tarball, TypeScript and @types/node installed by `npm ci --offline`.
 * `extra` names more packages of our lock file to install (at our versions).
 */
export const makeConsumerProject = (tarball: string, extra: ReadonlyArray<string> = ["typescript", "@types/node"]): ConsumerProject => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-consumer-"))
  const lock = readJson<{ packages: Record<string, LockEntry> }>(join(root, "package-lock.json"))
  const pkg = readJson<{ name: string; version: string; dependencies: Record<string, string>; bin: Record<string, string>; engines: Record<string, string>; license: string }>(join(root, "package.json"))
  const entries = closure(lock.packages, [...Object.keys(pkg.dependencies), ...extra])
  const extraVersions = Object.fromEntries(extra.map((name) => [name, entries[`node_modules/${name}`]!.version!]))
  const dependencies = { [pkg.name]: `file:${tarball}`, ...extraVersions }
  const integrity = "sha512-" + createHash("sha512").update(readFileSync(tarball)).digest("base64")
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "periscope-consumer", private: true, type: "module", dependencies }, null, 2))
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify({
    name: "periscope-consumer",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "periscope-consumer", dependencies },
      [`node_modules/${pkg.name}`]: {
        version: pkg.version,
        resolved: `file:${tarball}`,
        integrity,
        license: pkg.license,
        dependencies: pkg.dependencies,
        bin: pkg.bin,
        engines: pkg.engines
      },
      ...entries
    }
  }, null, 2))
  mkdirSync(join(dir, "src"), { recursive: true })
  const run = (command: string, args: ReadonlyArray<string>, options: { readonly env?: Record<string, string> } = {}) =>
    execFileSync(command, args, { cwd: dir, env: { ...env, ...options.env }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 })
  run("npm", ["ci", "--offline", "--no-audit", "--no-fund"])
  return { dir, tarball, run }
}
