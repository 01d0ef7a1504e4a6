#!/usr/bin/env node
/**
 * The installed `periscope` command. It checks the Node version before anything else is
 * loaded: on an older Node the dependencies (undici, Effect) fail on import with a stack trace,
 * so this entry says in one sentence which Node it needs and exits 1; on a new enough Node it
 * runs the CLI (cli.ts). No static import, and code an old Node parses.
 */
/** package.json's engines.node, the oldest Node whose features the dependencies use. */
const NEED = [22, 19]

const here = process.versions.node
const [major = 0, minor = 0] = here.split(".").map(Number)
if (major < NEED[0]! || (major === NEED[0] && minor < NEED[1]!)) {
  process.stderr.write(
    `periscope: Periscope needs Node ${NEED.join(".")} or newer and this is Node ${here}: ` +
      "install Node 24 from https://nodejs.org/ (or with nvm: nvm install 24) and run it again.\n"
  )
  process.exitCode = 1
} else {
  await import("./cli.ts")
}
