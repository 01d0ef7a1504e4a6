/**
 * webFetch's bad inputs, each with its status, business code and the field and rule named;
 * the same auth as the other search endpoints; the endpoint in /openapi.json.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FetchServer, postFetch, startFetchServer } from "./support.ts"

let server: FetchServer

beforeAll(async () => {
  server = await startFetchServer({})
})

afterAll(async () => {
  await server?.close()
})

const BAD: ReadonlyArray<readonly [name: string, body: unknown, param: string | null, message: string]> = [
  ["missing url", {}, "url", "url: is required"],
  ["url not a string", { url: 42 }, "url", "url: must be an absolute http(s) URL of at most 8192 characters, got 42"],
  ["empty url", { url: "" }, "url", "url: must be an absolute http(s) URL of at most 8192 characters"],
  ["url too long", { url: `https://example.com/${"a".repeat(9000)}` }, "url", "url: must be an absolute http(s) URL of at most 8192 characters"],
  ["unknown format", { url: "https://example.com/", format: "pdf" }, "format", "format: must be markdown, text or html, got \"pdf\""],
  ["maxChars zero", { url: "https://example.com/", maxChars: 0 }, "maxChars", "maxChars: must be an integer from 1 to 10000000, got 0"],
  ["maxChars fraction", { url: "https://example.com/", maxChars: 1.5 }, "maxChars", "maxChars: must be an integer from 1 to 10000000, got 1.5"],
  ["maxChars too large", { url: "https://example.com/", maxChars: 10_000_001 }, "maxChars", "maxChars: must be an integer from 1 to 10000000, got 10000001"],
  ["maxChars a string", { url: "https://example.com/", maxChars: "100" }, "maxChars", "maxChars: must be an integer from 1 to 10000000, got \"100\""],
  ["fresh not a boolean", { url: "https://example.com/", fresh: "yes" }, "fresh", "fresh: must be a boolean, got \"yes\""],
  ["addToIndex not a boolean", { url: "https://example.com/", addToIndex: 1 }, "addToIndex", "addToIndex: must be a boolean, got 1"],
  ["body an array", [], null, "request body: must be a JSON object with url (or urls) and optional format, maxChars, maxTokens, query, fresh, addToIndex, render"]
]

describe("webFetch: bad input", () => {
  it.each(BAD)("%s: 400 naming the field", async (_name, body, param, message) => {
    const { status, body: answer } = await postFetch(server.url, body)
    expect(status).toBe(400)
    expect(answer).toMatchObject({ success: false, code: "400", data: null, extra: null, exception: { type: "InvalidRequest" } })
    expect(answer.message.startsWith(message), answer.message).toBe(true)
    if (param !== null) expect(answer.message).toContain(param)
  })

  it("not JSON: 400 InvalidJson", async () => {
    const { status, body } = await postFetch(server.url, "{url:")
    expect(status).toBe(400)
    expect(body.exception.type).toBe("InvalidJson")
  })

  it("a URL the server cannot fetch is the caller's: 400 InvalidUrl naming url", async () => {
    const { status, body } = await postFetch(server.url, { url: "gopher://example.com/" })
    expect(status).toBe(400)
    expect(body).toMatchObject({ code: "400", exception: { type: "InvalidUrl", detail: "url: must be an http(s) URL, got a gopher: URL" } })
    const credentials = await postFetch(server.url, { url: "https://user:secret@example.com/" })
    expect(credentials.status).toBe(400)
    expect(credentials.body.message).toBe("url: must not carry credentials")
    expect(JSON.stringify(credentials.body)).not.toContain("secret")
  })
})

describe("webFetch: auth and contract", () => {
  it("refuses a request without a key or with a wrong one (401)", async () => {
    const none = await postFetch(server.url, { url: "https://example.com/" }, { key: null })
    expect(none.status).toBe(401)
    expect(none.body).toMatchObject({ success: false, code: "90402" })
    const wrong = await postFetch(server.url, { url: "https://example.com/" }, { key: "not-a-key-0000000000" })
    expect(wrong.status).toBe(401)
  })

  it("is described in /openapi.json with its request and error statuses", async () => {
    const response = await fetch(`${server.url}/openapi.json`, { headers: { authorization: "Bearer fetch-test-key-0123456789" } })
    const spec = await response.json() as any
    const operation = spec.paths["/api/search/webFetch"].post
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403", "413", "415", "502", "504"]))
  })
})
