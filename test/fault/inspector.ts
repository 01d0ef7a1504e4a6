/**
 * Memory of a server process read from outside through its inspector (the
 * process runs with --inspect=127.0.0.1:<port>): a full garbage collection
 * (HeapProfiler.collectGarbage), then process.memoryUsage() evaluated in it.
 * The heap in use after a collection is what a leak grows; RSS alone also
 * moves with how much heap V8 chose to keep.
 */
export interface Memory {
  readonly heapUsedMb: number
  readonly rssMb: number
}

export const memoryAfterGc = async (inspectPort: number): Promise<Memory> => {
  const targets = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json() as Array<{ webSocketDebuggerUrl: string }>
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl)
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true })
    socket.addEventListener("error", () => reject(new Error("inspector connection failed")), { once: true })
  })
  let nextId = 0
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<any>((resolve, reject) => {
      const id = ++nextId
      const onMessage = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data))
        if (message.id !== id) return
        socket.removeEventListener("message", onMessage)
        if (message.error !== undefined) reject(new Error(JSON.stringify(message.error)))
        else resolve(message.result)
      }
      socket.addEventListener("message", onMessage)
      socket.send(JSON.stringify({ id, method, params }))
    })
  try {
    await call("HeapProfiler.collectGarbage")
    const result = await call("Runtime.evaluate", { expression: "JSON.stringify(process.memoryUsage())", returnByValue: true })
    const usage = JSON.parse(result.result.value) as { heapUsed: number; rss: number }
    return { heapUsedMb: usage.heapUsed / 2 ** 20, rssMb: usage.rss / 2 ** 20 }
  } finally {
    socket.close()
  }
}
