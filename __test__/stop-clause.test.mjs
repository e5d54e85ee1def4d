// A timeout's clause (docs/tracing.md#the-timeouts-clause): where the program was stopped and
// which tool calls were pending, after the seam's own words, only when the whole message fits
// its budget; every other end keeps its message exactly.
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { IsolatePtcRuntime, PythonCodeRuntime, PythonPtcRuntime } from '../lib/index.mjs'
import native from '../lib/native.mjs'
import { MAX_NAMED_CALLS } from '../lib/stop-clause.mjs'
import { loadIsolate } from './helpers.mjs'
import { PYTHON } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 20_000 })
const TIERS = native.containedIsolatesAvailable() ? ['process', 'thread'] : ['thread']
const never = () => new Promise(() => {})
const bindings = [{ global: 'tools', functions: { search: never, fetch: never, x: () => 1 } }]
const quoted = (text) => Buffer.byteLength(JSON.stringify(text))

describe.each(TIERS)('TypeScript, containment %s', (containment) => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate({ containment, computeMs: 200, maxWallMs: 600 }))
  })
  afterAll(() => fiber.dispose())
  const message = async (program, request = {}) => (await runtime.run({ program, bindings, ...request })).error.message

  it('names the frame the budget stopped', async () => {
    expect(await message('function score(n: number): never {\n  for (;;) {}\n}\nscore(1)')).toBe('compute budget exhausted (200ms busy) at program.ts:2:3 in score()')
    expect(await message('let i = 0\nwhile (true) i++')).toBe('compute budget exhausted (200ms busy) at program.ts:2:1')
  })

  it('names the calls in flight, in call order, the first three', async () => {
    expect(await message('await tools.search({})')).toBe('wall-clock ceiling reached (600ms); 1 tool call pending: tools.search')
    expect(await message('await tools.x({}); tools.search({}); tools.fetch({}); for (;;) {}')).toBe(
      'compute budget exhausted (200ms busy) at program.ts:1:55; 2 tool calls pending: tools.search, tools.fetch',
    )
    const calls = 'await Promise.all([tools.fetch({}), tools.search({}), tools.fetch({}), tools.search({}), tools.x({})])'
    expect(MAX_NAMED_CALLS).toBe(3)
    // tools.x was answered: four in flight.
    expect(await message(calls)).toBe('wall-clock ceiling reached (600ms); 4 tool calls pending: tools.fetch, tools.search, tools.fetch, …')
  })

  it('is left off when the whole message would not fit beside the logs; the end stays a timeout', async () => {
    const program = "console.log('12345')\nfor (;;) {}"
    const full = 'compute budget exhausted (200ms busy) at program.ts:2:1'
    const logs = quoted(['12345'])
    for (const [cap, text] of [
      [logs + quoted(full), full],
      [logs + quoted(full) - 1, 'compute budget exhausted (200ms busy)'],
    ]) {
      const { fiber: capped, runtime: small } = await loadIsolate({ containment, computeMs: 200, maxOutputBytes: cap })
      try {
        expect(await small.run({ program, bindings })).toStrictEqual({ logs: ['12345'], error: { kind: 'timeout', message: text } })
      } finally {
        await capped.dispose()
      }
    }
  })

  it('an abort keeps its reason exactly, with the location in the stats only', async () => {
    const abort = new AbortController()
    setTimeout(() => abort.abort('enough'), 100)
    const result = await runtime.run({ program: 'tools.search({}); for (;;) {}', bindings, signal: abort.signal })
    expect(result).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'enough' } })
  })
})

describe('Python', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    const ctx = new Context()
    fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: PYTHON, maxWallMs: 400 })
    runtime = ctx.get('codeRuntime')
  })
  afterAll(() => fiber.dispose())

  it('names the <model> frame and the calls in flight', async () => {
    const stopped = await runtime.run({ program: 'def score():\n    while True:\n        pass\nscore()', bindings })
    expect(stopped.error).toStrictEqual({ kind: 'timeout', message: 'wall-clock ceiling reached (400ms) at <model>:2:5 in score()' })
    const waiting = await runtime.run({ program: 'import asyncio\nawait asyncio.gather(tools.search({}), tools.fetch({}))', bindings })
    expect(waiting.error.message).toBe('wall-clock ceiling reached (400ms); 2 tool calls pending: tools.search, tools.fetch')
    const gen = await runtime.run({ program: 'total = sum(1 for _ in iter(int, 1))', bindings })
    expect(gen.error.message).toBe('wall-clock ceiling reached (400ms) at <model>:1:12 in <genexpr>')
  })

  it("is left off past the message cap (maxValueBytes bytes)", async () => {
    const full = 'wall-clock ceiling reached (400ms) at <model>:1:1'
    for (const [cap, text] of [
      [Buffer.byteLength(full), full],
      [Buffer.byteLength(full) - 1, 'wall-clock ceiling reached (400ms)'],
    ]) {
      const ctx = new Context()
      const capped = await ctx.plugin(PythonCodeRuntime, { pythonBin: PYTHON, maxWallMs: 400, maxValueBytes: cap })
      try {
        expect((await ctx.get('codeRuntime').run({ program: 'while True:\n    pass', bindings })).error.message).toBe(text)
      } finally {
        await capped.dispose()
      }
    }
  })
})

describe('the ptc seam: the host\'s words first', () => {
  it.each([
    ['typescript', IsolatePtcRuntime, 'function spin() {\n  for (;;) {}\n}\nspin()', 'at program.ts:2:3 in spin()'],
    ['python', PythonPtcRuntime, 'def spin():\n    while True:\n        pass\nspin()', 'at <model>:2:5 in spin()'],
  ])('%s', async (_, Class, program, where) => {
    const ctx = new Context()
    const fiber = await ctx.plugin(Class, Class === PythonPtcRuntime ? { pythonBin: PYTHON, timeoutMs: 300 } : { timeoutMs: 300 })
    try {
      const ptc = ctx.ptcRuntime
      expect(await ptc.run(ptc.resolve({ program, bindings: [] }))).toStrictEqual({
        logs: [],
        error: { kind: 'timeout', message: `execution deadline reached (300ms) ${where}` },
      })
    } finally {
      await fiber.dispose()
    }
  })
})
