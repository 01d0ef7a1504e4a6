import { defineConfig } from "vitest/config"

// `npm test`: every test that runs in the test's own process or beside a server it starts in it.
// Tests that start the CLI, the server as a child process, a browser, Deno, a container or an
// installed package are named *.e2e.test.ts and run with `npm run test:e2e` (vitest.e2e.config.ts).

// Files that need a fresh module world: they set environment variables the default ConfigProvider
// reads (it reads the environment once per module world), or count process-wide metrics.
const isolated = [
  "test/search/http.test.ts",
  "test/chat/routing.test.ts",
  "test/wires/wiresDocument.test.ts",
  "test/mcp/mcpHttp.test.ts",
  "test/observability/metrics.test.ts"
]

const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  // Suites start real servers and child processes; two cores run them best one file at a time each.
  fileParallelism: true,
  maxWorkers: 2
}

export default defineConfig({
  test: {
    ...shared,
    projects: [
      {
        // Modules load once per worker, not once per file: about a quarter of the run's time.
        test: { ...shared, name: "shared", isolate: false, include: ["test/**/*.test.ts"], exclude: ["test/**/*.e2e.test.ts", ...isolated] }
      },
      { test: { ...shared, name: "isolated", isolate: true, include: isolated } }
    ]
  }
})
