// Where a run stopped (`stats.stoppedAt`, docs/tracing.md#where-a-run-stopped): a budget, an
// abort or a protocol breach that ends a TypeScript run while its code runs records the program's
// innermost frame, in both tiers. What a program could try: hide its frames (a replaced
// `Error.prepareStackTrace`, no stack trace limit), name a function like the runtime's, recurse
// deeply, stop inside the argument walk of a binding call or inside a timer or a microtask, or
// write TypeScript whose annotations would move positions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import native from '../lib/native.mjs'
import { loadIsolate } from './helpers.mjs'

const TIERS = native.containedIsolatesAvailable() ? ['process', 'thread'] : ['thread']
const bindings = [{ global: 'tools', functions: { x: () => 1, wait: () => new Promise(() => {}) } }]

describe.each(TIERS)('containment %s', (containment) => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate({ containment, computeMs: 200, maxWallMs: 5000 }))
  })
  afterAll(() => fiber.dispose())

  /** Runs `program`; returns its failure and where it stopped. */
  const stop = async (program, request = {}) => {
    const result = await runtime.run({ program, bindings, ...request })
    const stats = runtime.lastRunStats()
    if (stats.stoppedAt !== undefined) expect(Object.isFrozen(stats.stoppedAt)).toBe(true)
    return { error: result.error, at: stats.stoppedAt }
  }

  it.each([
    ['a loop at the top level', 'let x = 0\nwhile (true) {\n  x++\n}', { line: 2, column: 1 }],
    ['a loop in a named function', 'function score(n) {\n  let x = 0\n  for (;;) { x += n }\n}\nscore(2)', { line: 3, column: 3, functionName: 'score' }],
    ['annotated TypeScript, in its own coordinates', 'function score(n: number): never {\n  let x: number = 0\n  for (;;) { x += n }\n}\nscore(2)', { line: 3, column: 3, functionName: 'score' }],
    ['a replaced Error.prepareStackTrace and no stack trace limit', 'Error.prepareStackTrace = () => { throw 1 }; Error.stackTraceLimit = 0\nfunction spin() { for (;;) {} }\nspin()', { line: 2, column: 19, functionName: 'spin' }],
    ["a function named like the runtime's own", "const f = function () { for (;;) {} }; Object.defineProperty(f, 'name', { value: 'code-runtime-native:x' }); f()", { line: 1, column: 25, functionName: 'code-runtime-native:x' }],
    ['deep recursion', 'function r(n) {\n  if (n === 0) for (;;) {}\n  return r(n - 1)\n}\nr(5000)', { line: 2, column: 16, functionName: 'r' }],
    ["a getter in a binding call's arguments", 'await tools.x({ get a() { for (;;) {} } })', { line: 1, column: 27, functionName: 'get a' }],
    ['a timer callback', 'setTimeout(() => { for (;;) {} }, 0); await new Promise(() => {})', { line: 1, column: 20 }],
    ['a microtask', 'await null\nfor (;;) {}', { line: 2, column: 1 }],
  ])('the compute budget in %s: the program frame it was in', async (_, program, at) => {
    const { error, at: stopped } = await stop(program)
    // The message says so too (docs/tracing.md#the-timeouts-clause).
    const where = ` at program.ts:${at.line}:${at.column}${at.functionName === undefined ? '' : ` in ${at.functionName}()`}`
    expect(error).toEqual({ kind: 'timeout', message: `compute budget exhausted (200ms busy)${where}` })
    expect(stopped).toStrictEqual(at)
  })

  it('the wall ceiling and an abort while the program computes', async () => {
    const { fiber: slowFiber, runtime: slow } = await loadIsolate({ containment, computeMs: 60_000, maxWallMs: 300 })
    try {
      await slow.run({ program: 'let i = 0\nwhile (true) i++', bindings })
      expect(slow.lastRunStats().stoppedAt).toStrictEqual({ line: 2, column: 1 })
      const abort = new AbortController()
      setTimeout(() => abort.abort('enough'), 100)
      const aborted = await slow.run({ program: 'function busy() {\n  for (;;) {}\n}\nbusy()', bindings, signal: abort.signal })
      // The result is exactly what it was: the location is in the stats only.
      expect(aborted).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'enough' } })
      expect(slow.lastRunStats().stoppedAt).toStrictEqual({ line: 2, column: 3, functionName: 'busy' })
    } finally {
      await slowFiber.dispose()
    }
  })

  it('the heap cap: the frame that outgrew it, read within the grant its callback gives', async () => {
    const { fiber: heapFiber, runtime: heap } = await loadIsolate({ containment, maxOldGenerationSizeMb: 32 })
    try {
      const result = await heap.run({ program: 'const a = []\nfor (;;) a.push(new Array(1e5).fill(1))', bindings })
      expect(result.error).toEqual({ kind: 'worker-exit', message: 'isolate heap limit reached (32 MiB)' })
      const at = heap.lastRunStats().stoppedAt
      // A sandbox process its memory cap kills before V8 unwound says nowhere (docs/tracing.md).
      if (containment === 'thread' || at !== undefined) expect(at).toStrictEqual({ line: 2, column: 12 })
      // The host is unharmed and the next run is ordinary.
      expect(await heap.run({ program: 'return 1', bindings })).toStrictEqual({ logs: [], value: 1 })
    } finally {
      await heapFiber.dispose()
    }
  })

  it('no location when nothing of the program was running, or the run ended any other way', async () => {
    const { fiber: waitFiber, runtime: waiting } = await loadIsolate({ containment, maxWallMs: 300, maxOldGenerationSizeMb: 32 })
    try {
      for (const [program, ended] of [
        ['await tools.wait({})', 'timeout'], // awaiting a binding: the calls in flight are the attribution
        ['await new Promise((r) => setTimeout(r, 10_000))', 'timeout'],
        ['return 1', 'value'],
        ["throw new Error('x')", 'exception'],
      ]) {
        const result = await waiting.run({ program, bindings })
        expect(result.error?.kind ?? 'value', program).toBe(ended)
        expect(waiting.lastRunStats().stoppedAt, program).toBeUndefined()
        expect(Object.keys(waiting.lastRunStats()), program).not.toContain('stoppedAt')
      }
    } finally {
      await waitFiber.dispose()
    }
  })
})
