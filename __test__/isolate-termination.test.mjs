// Termination must reach every loop V8 optimises. With Turboshaft's loop unrolling (V8 of the v8
// crate 152.2) the unrolled body of `for (;;) keep.push({ a: new Array(1000).fill(x) })` had no
// interrupt check: computeMs, abort and the heap limit were ignored and a host thread ran it
// forever, growing past 4 GiB. The addon turns that unrolling off; each loop shape here must end
// at its budget in both containment tiers. Each tier runs in a child Node with a timeout, so a
// regression fails the test instead of hanging the suite's own process.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import native from '../lib/native.mjs'

vi.setConfig({ testTimeout: 120_000 })
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const ENTRY = fileURLToPath(new URL('../lib/index.mjs', import.meta.url))

const LOOPS = [
  'const keep = []; for (;;) keep.push({ a: new Array(1000).fill("x" + keep.length) })',
  'const keep = []; for (;;) keep.push(new Array(1000))',
  'const keep = []; let i = 0; while (true) keep.push({ i: i++, s: "y" + i })',
  'let o = {}; for (let i = 0; ; i++) o["k" + i] = [i, i]',
  'const m = new Map(); for (let i = 0; ; i++) m.set(i, { v: [i] })',
]

/** Runs every loop under `config` in a child Node; its results, and its RSS at the end. */
function runInChild(config) {
  const script = `
    import { Context } from 'cordis'
    import { IsolateCodeRuntime } from ${JSON.stringify(ENTRY)}
    const ctx = new Context()
    const fiber = await ctx.plugin(IsolateCodeRuntime, ${JSON.stringify(config)})
    const results = []
    for (const program of ${JSON.stringify(LOOPS)}) results.push(await ctx.codeRuntime.run({ program, bindings: [] }))
    const rss = process.memoryUsage().rss
    await fiber.dispose()
    console.log(JSON.stringify({ results, rss }))`
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 90_000,
  })
  expect(child.signal, `the child did not end: ${child.stderr}`).toBeNull()
  expect(child.status, child.stderr).toBe(0)
  return JSON.parse(child.stdout)
}

const tiers = native.containedIsolatesAvailable() ? ['thread', 'process'] : ['thread']

describe.each(tiers)('optimised allocating loops, containment %s', (containment) => {
  it('end at the compute budget', () => {
    const { results } = runInChild({ containment, computeMs: 500, maxOldGenerationSizeMb: 2048 })
    for (const result of results) {
      // Where depends on the loop, and a sandbox process killed before V8 unwound says nowhere
      // (docs/tracing.md#the-timeouts-clause).
      const message = expect.stringMatching(/^compute budget exhausted \(500ms busy\)( at program\.ts:\d+:\d+( in [\w$]+\(\))?)?$/)
      expect(result).toEqual({ logs: [], error: { kind: 'timeout', message } })
    }
  })

  it('end at the heap limit with one grant, and the host does not carry the heap', () => {
    const { results, rss } = runInChild({ containment, maxOldGenerationSizeMb: 48 })
    for (const result of results) {
      expect(result).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'isolate heap limit reached (48 MiB)' } })
    }
    expect(rss).toBeLessThan(1024 * 1024 * 1024)
  })
})
