import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.mjs'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each suite runs in its own process: a suite that checks process-wide facts (threads, RSS,
    // listeners) is not disturbed by another suite's runs.
    pool: 'forks',
  },
})
