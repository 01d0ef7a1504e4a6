import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Suites start real servers and child processes; two cores run them best one file at a time each.
    fileParallelism: true,
    maxWorkers: 2
  }
})
