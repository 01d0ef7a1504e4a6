/**
 * The floor under test/bench/gateway.ts's bare proxy: a process that moves bytes between each
 * client connection and a connection of its own to the upstream, without reading HTTP at all.
 * What it costs over the direct path is what a second process on the way costs on this machine
 * (the sockets, the wakeups, the copies); what the bare node:http proxy costs over it is Node's
 * HTTP server and client.
 * Usage: node tcpPipe.ts <port> <upstream base URL>
 */
import { createConnection, createServer } from "node:net"

const [port, base] = process.argv.slice(2)
const upstream = new URL(base!)

// No Nagle on either side, as Node's HTTP server and client set it: a small write held for an ACK
// that the peer delays waits 40 ms.
const server = createServer({ noDelay: true }, (client) => {
  const out = createConnection({ port: Number(upstream.port), host: upstream.hostname, noDelay: true })
  client.pipe(out)
  out.pipe(client)
  // Either side closing or failing ends both: a pipe never holds a half-open pair.
  const end = () => {
    client.destroy()
    out.destroy()
  }
  client.on("error", end).on("close", end)
  out.on("error", end).on("close", end)
})
server.listen(Number(port), "127.0.0.1", () => process.stdout.write("listening\n"))
