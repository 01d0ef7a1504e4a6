import { defineConfig } from "vitest/config"

// `npm run test:e2e`: the end-to-end tests (*.e2e.test.ts): the CLI, the server as a child
// process, Chromium, Deno, podman and the packed package, each as a user would run it.
export default defineConfig({
  test: {
    include: ["test/**/*.e2e.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: true,
    maxWorkers: 2
  }
})
