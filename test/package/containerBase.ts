/**
 * A stand-in for the official node:24-bookworm-slim image, for machines that
 * reach Debian's mirror but no image registry: Debian bookworm from
 * debootstrap (minbase), Node 24 from npm's `node` package (the project's
 * .ci/node), npm, and the `node` user (uid 1000) the official image has,
 * imported into podman under the official name. Made once: the rootfs is kept
 * in .cache/container and the image in podman's store.
 */
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export const BASE_IMAGE = "docker.io/library/node:24-bookworm-slim"

const run = (command: string, args: ReadonlyArray<string>, options: { readonly input?: string; readonly timeout?: number } = {}) =>
  execFileSync(command, args, { encoding: "utf8", stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"], input: options.input, timeout: options.timeout ?? 600_000 })

export const imageExists = (name: string): boolean => {
  try {
    run("podman", ["image", "exists", name])
    return true
  } catch {
    return false
  }
}

/** Builds the base image unless podman already has one under the official name. */
export const ensureBaseImage = (root: string): void => {
  if (imageExists(BASE_IMAGE)) return
  const cache = join(root, ".cache/container")
  const rootfs = join(cache, "rootfs")
  mkdirSync(cache, { recursive: true })
  if (!existsSync(join(rootfs, "etc/debian_version")) || !existsSync(join(cache, "debootstrap.done"))) {
    run("debootstrap", ["--variant=minbase", "bookworm", rootfs, "http://deb.debian.org/debian"], { timeout: 1_800_000 })
    writeFileSync(join(cache, "debootstrap.done"), "")
  }
  // Node and npm where the official image has them.
  const node = realpathSync(join(root, ".ci/node/node_modules/.bin/node"))
  cpSync(node, join(rootfs, "usr/local/bin/node"))
  const npmHome = [join(root, ".ci/node/node_modules/npm"), "/usr/lib/node_modules/npm", "/usr/local/lib/node_modules/npm"].find((d) => existsSync(join(d, "bin/npm-cli.js")))
  if (npmHome === undefined) throw new Error("no npm to put in the base image (looked in .ci/node and /usr/lib/node_modules)")
  cpSync(npmHome, join(rootfs, "usr/local/lib/node_modules/npm"), { recursive: true })
  for (const [bin, target] of [["npm", "npm-cli.js"], ["npx", "npx-cli.js"]] as const) {
    const link = join(rootfs, "usr/local/bin", bin)
    if (!existsSync(link)) symlinkSync(`../lib/node_modules/npm/bin/${target}`, link)
  }
  // A machine whose egress goes through a TLS-inspecting proxy trusts its CA through NODE_EXTRA_CA_CERTS:
  // the stand-in trusts it too, so that `npm install` in the build reaches the registry as it does here.
  const extraCa = process.env.NODE_EXTRA_CA_CERTS
  const caChange: Array<string> = []
  if (extraCa !== undefined && existsSync(extraCa)) {
    mkdirSync(join(rootfs, "usr/local/share/ca-certificates"), { recursive: true })
    cpSync(extraCa, join(rootfs, "usr/local/share/ca-certificates/host-extra-ca.crt"))
    caChange.push("--change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-extra-ca.crt'")
  }
  run("chroot", [rootfs, "/bin/sh", "-c", "getent passwd node >/dev/null || (groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node)"])
  run("sh", ["-c", `tar -C '${rootfs}' --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* -c . | podman import ` +
    `--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'ENV NODE_VERSION=${run(node, ["-p", "process.versions.node"]).trim()}' ` +
    `${caChange.join(" ")} --change 'CMD ["node"]' - ${BASE_IMAGE}`], { timeout: 900_000 })
}
