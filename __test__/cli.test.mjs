// The command line: real child processes running the shipped examples.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const cli = (...args) => spawnSync(process.execPath, ['bin/cli.mjs', ...args], { cwd: root, encoding: 'utf8', timeout: 30000 })
const HELLO = 'hello, world! { round: 1 }\nhello, world! { round: 2 }\n{\n  "greeted": "world",\n  "rounds": 2\n}\n'

describe('code-runtime-native run', () => {
  it('runs examples/hello.ts and exits 0', () => {
    const { status, stdout } = cli('run', 'examples/hello.ts')
    expect(status).toBe(0)
    expect(stdout).toBe(HELLO)
  })

  it('runs the commands README.md gives a clone, as written', () => {
    // The shell runs each line as a contributor types it; `node` is the Node running this suite.
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    const commands = [...readme.matchAll(/^node bin\/cli\.mjs .*$/gm)].map((m) => m[0])
    expect(commands).toEqual([
      'node bin/cli.mjs run examples/hello.ts',
      'node bin/cli.mjs run examples/weather.ts --bindings examples/weather-tools.mjs',
      `node bin/cli.mjs run examples/hello.ts --config '{"computeMs": 1000}'`,
    ])
    const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` }
    const [hello, weather, configured] = commands.map((command) => {
      const { status, stdout, stderr } = spawnSync('sh', ['-c', command], { cwd: root, encoding: 'utf8', timeout: 30000, env })
      return { status, stdout, stderr }
    })
    expect(hello).toEqual({ status: 0, stdout: HELLO, stderr: '' })
    expect(weather.status).toBe(0)
    expect(weather.stdout).toContain('warmest: Lisbon\n')
    expect(configured).toEqual({ status: 0, stdout: HELLO, stderr: '' })
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
    expect(timedOut.stderr).toBe('code run failed (timeout): compute budget exhausted (200ms busy) at program.ts:1:1\n')
    rmSync(dir, { recursive: true })
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
