// The framework examples (examples/frameworks/) as a user runs them: `node <example>` in a child
// process, each printing what its framework handed back for the same program.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const run = async (name) => (await promisify(execFile)(process.execPath, [`examples/frameworks/${name}.mjs`], { cwd: root, encoding: 'utf8' })).stdout

const LOGS = ['Lisbon 21 Oslo 4']
const EXPECTED = {
  mastra: `${JSON.stringify({ success: true, result: { warmer: 'Lisbon' }, logs: LOGS })}\nLisbon is warmer.\n`,
  tanstack: `${JSON.stringify({ success: true, result: { warmer: 'Lisbon' }, logs: LOGS })}\n`,
  cloudflare: `${JSON.stringify({ result: { warmer: 'Lisbon' }, logs: LOGS })}\n`,
  'ai-sdk': `${JSON.stringify({ logs: LOGS, value: { warmer: 'Lisbon' } })}\nLisbon is warmer.\n`,
}

describe('examples/frameworks', () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`${name}.mjs runs and prints what its framework returned`, async () => {
      expect(await run(name)).toBe(expected)
    })
  }
})
