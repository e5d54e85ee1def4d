// The command line: real child processes running the shipped examples.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const cli = (...args) => spawnSync(process.execPath, ['bin/cli.mjs', ...args], { cwd: root, encoding: 'utf8', timeout: 30000 })

describe('code-runtime-native run', () => {
  it('runs examples/hello.ts and exits 0', () => {
    const { status, stdout } = cli('run', 'examples/hello.ts')
    expect(status).toBe(0)
    expect(stdout).toBe('hello, world! { round: 1 }\nhello, world! { round: 2 }\n{\n  "greeted": "world",\n  "rounds": 2\n}\n')
  })

  it('runs a program against a bindings module', () => {
    const { status, stdout } = cli('run', 'examples/weather.ts', '--bindings', 'examples/weather-tools.mjs')
    expect(status).toBe(0)
    expect(stdout).toContain('skipped Atlantis: no forecast for Atlantis (forecast)\nwarmest: Lisbon\n')
    expect(stdout).toContain('"checked": 2')
  })

  it('exits 1 with the failure kind and message when the run fails', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crn-cli-'))
    const file = join(dir, 'fails.ts')
    writeFileSync(file, "console.log('before')\nthrow new Error('kaboom')")
    const { status, stdout, stderr } = cli('run', file)
    expect(status).toBe(1)
    expect(stdout).toBe('before\n')
    expect(stderr).toBe('code run failed (exception): Error: kaboom\n    at program.ts:2:7\n')
    const slow = join(dir, 'slow.ts')
    writeFileSync(slow, 'for (;;) {}')
    const timedOut = cli('run', slow, '--config', '{"computeMs": 200}')
    expect(timedOut.status).toBe(1)
    expect(timedOut.stderr).toBe('code run failed (timeout): compute budget exhausted (200ms busy)\n')
  })

  it('exits 2 on misuse', () => {
    expect(cli().status).toBe(2)
    expect(cli('run').status).toBe(2)
    expect(cli('launch', 'examples/hello.ts').status).toBe(2)
    expect(cli('run', 'does-not-exist.ts').status).toBe(2)
    expect(cli('run', 'examples/hello.ts', '--bindings', 'missing.mjs').status).toBe(2)
    expect(cli('run', 'examples/hello.ts', '--config', '{"computeMs": -1}').stderr)
      .toContain('config.computeMs must be a positive number, got -1')
    expect(cli('run', 'examples/hello.ts', '--bogus').status).toBe(2)
    expect(cli('--help').status).toBe(0)
  })
})
