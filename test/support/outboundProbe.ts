/**
 * Preloaded into a server process (`node --import`) to record every way out it tries: each
 * DNS lookup and each TCP connect (fetch, undici and TLS all connect through net.Socket), one
 * line each in the file PERISCOPE_OUTBOUND_LOG names. It changes nothing: the calls go on.
 */
import dns from "node:dns"
import { appendFileSync } from "node:fs"
import net from "node:net"

const file = process.env.PERISCOPE_OUTBOUND_LOG
if (file === undefined || file === "") throw new Error("outboundProbe: set PERISCOPE_OUTBOUND_LOG to the file that records the attempts")
const record = (line: string) => appendFileSync(file, `${line}\n`)

const watch = <T extends object>(target: T, names: ReadonlyArray<string>) => {
  for (const name of names) {
    const original = (target as Record<string, unknown>)[name]
    if (typeof original !== "function") continue
    ;(target as Record<string, unknown>)[name] = function(this: unknown, host: unknown, ...rest: Array<unknown>) {
      record(`lookup ${String(host)}`)
      return original.call(this, host, ...rest)
    }
  }
}
const resolvers = ["lookup", "lookupService", "resolve", "resolve4", "resolve6", "resolveAny"]
watch(dns, resolvers)
watch(dns.promises, resolvers)

const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function(this: net.Socket, ...args: Array<unknown>) {
  // connect(options | [options, cb]), connect(port, host?), connect(path): IPC paths do not leave the machine.
  const first = Array.isArray(args[0]) ? args[0][0] : args[0]
  const options = typeof first === "object" && first !== null ? first as { host?: string; port?: number; path?: string } : undefined
  if (options?.path === undefined && typeof first !== "string") {
    const port = options?.port ?? first
    const host = options?.host ?? (typeof args[1] === "string" ? args[1] : "localhost")
    record(`connect ${host}:${String(port)}`)
  }
  return (connect as (...a: Array<unknown>) => net.Socket).apply(this, args)
} as typeof connect
