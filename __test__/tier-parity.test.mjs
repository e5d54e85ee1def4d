// The same answer in both tiers (and in Python where the rule is shared): cases hostile programs
// found where `containment: 'process'` and `'thread'` disagreed, or where both broke a rule the
// runtime keeps everywhere else.
import fs from 'node:fs'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IsolateCodeRuntime, PythonCodeRuntime } from '../lib/index.mjs'
import { PYTHON, privateTmpdir } from './python-helpers.mjs'

const contexts = []
let tmp

async function load(Class, config) {
  const ctx = new Context()
  contexts.push(await ctx.plugin(Class, config))
  return ctx.get('codeRuntime')
}

beforeAll(() => {
  tmp = privateTmpdir('tier-parity')
})

afterAll(async () => {
  for (const fiber of contexts) await fiber.dispose()
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** A value no JavaScript can render: every trap of the Proxy, and of its handler, throws. */
function unrenderable() {
  const thrower = new Proxy({}, { get: () => { throw new Error('the renderer ran a trap') } })
  return new Proxy({}, thrower)
}

const UNRENDERABLE = '<unrenderable rejection value>'

describe.each(['process', 'thread'])("containment '%s'", (containment) => {
  const isolate = (config = {}) => load(IsolateCodeRuntime, { containment, ...config })

  it('re-meters numbers as String(n) spells them: 1e308 and -1e21 fit a budget their spelling fits', async () => {
    // `{"logs":[],…}` aside, the ledger counts the value's JSON: `1e+308` is 6 bytes.
    const runtime = await isolate({ maxOutputBytes: 8 })
    expect(runtime.containment).toBe(containment)
    expect(await runtime.run({ program: 'return 1e308', bindings: [] })).toEqual({ logs: [], value: 1e308 })
    expect(await runtime.run({ program: 'return -1e21', bindings: [] })).toEqual({ logs: [], value: -1e21 })
    expect(await runtime.run({ program: 'return 5e-324', bindings: [] })).toEqual({ logs: [], value: 5e-324 })
    // One byte less than the spelling still overflows.
    const tight = await isolate({ maxOutputBytes: 7 })
    expect((await tight.run({ program: 'return 1.5e308', bindings: [] })).error?.kind).toBe('output-limit')
    const nested = await isolate({ maxOutputBytes: 37 })
    expect(await nested.run({ program: 'return [1e308, -1e21, 2**60]', bindings: [] })).toEqual({
      logs: [],
      value: [1e308, -1e21, 2 ** 60],
    })
  })

  it("onStats reports the CPU and heap of a run whose compute budget ended it, the supervisor's kill included", async () => {
    const runtime = await isolate({ computeMs: 300 })
    // In a sandbox process the built-in ignores termination and the supervisor kills the process;
    // on a thread the same budget ends an ordinary loop (the built-in would hold the host for seconds).
    const program = containment === 'process' ? 'Array.prototype.join.call({ length: 2 ** 28 })' : 'for (;;) {}'
    let stats
    const result = await runtime.run({ program, bindings: [], onStats: (s) => (stats = s) })
    // The built-in is never interrupted: no location (docs/tracing.md#where-a-run-stopped).
    const where = containment === 'process' ? '' : ' at program.ts:1:1'
    expect(result).toEqual({ logs: [], error: { kind: 'timeout', message: `compute budget exhausted (300ms busy)${where}` } })
    expect(stats.cpuMs).toBeGreaterThanOrEqual(290)
    expect(stats.heapUsedBytes).toBeGreaterThan(0)
    expect(stats.heapPeakBytes).toBeGreaterThanOrEqual(stats.heapUsedBytes)
    expect(runtime.lastRunStats()).toBe(stats)
  })

  it('onStats reports the CPU and heap of an aborted run, the supervisor\'s kill included', async () => {
    const runtime = await isolate({ computeMs: 5000 })
    const program = containment === 'process' ? 'Array.prototype.join.call({ length: 2 ** 28 })' : 'for (;;) {}'
    let stats
    const result = await runtime.run({ program, bindings: [], signal: AbortSignal.timeout(400), onStats: (s) => (stats = s) })
    expect(result.error?.kind).toBe('abort')
    expect(stats.cpuMs).toBeGreaterThan(100)
    expect(stats.heapUsedBytes).toBeGreaterThan(0)
  })

  it('a 2**28-character rope flattened under a 64 MiB heap cap ends at the cap', async () => {
    const runtime = await isolate({ maxOldGenerationSizeMb: 64 })
    const heapLimit = { logs: [], error: { kind: 'worker-exit', message: 'isolate heap limit reached (64 MiB)' } }
    const rope = "let s = 'ab'; for (let i = 0; i < 27; i++) s = s + s;"
    expect(await runtime.run({ program: `${rope} return [s.length, s.charCodeAt(1e8)]`, bindings: [] })).toEqual(heapLimit)
    expect(await runtime.run({ program: `${rope} const t = s.slice(1); await null; return t.length`, bindings: [] })).toEqual(heapLimit)
    expect(await runtime.run({ program: "return 'ab'.repeat(2 ** 27).charCodeAt(5)", bindings: [] })).toEqual(heapLimit)
    // Dropped at once and collected while the run goes on (young garbage fills the young
    // generation): the collection that frees it sees it first.
    const dropped = `${rope} const c = s.charCodeAt(1e8); s = null; let junk; for (let i = 0; i < 2e6; i++) junk = { i }; return c`
    expect(await runtime.run({ program: dropped, bindings: [] })).toEqual(heapLimit)
    // Well under the cap, the same shapes complete.
    expect(await runtime.run({ program: "let s = 'ab'; for (let i = 0; i < 20; i++) s = s + s; return s.charCodeAt(1e6)", bindings: [] })).toEqual({ logs: [], value: 97 })
  })

  it('a parser stack overflow reports a 1-based column, as every other compile error', async () => {
    const runtime = await isolate()
    const deep = await runtime.run({ program: `return ${'('.repeat(100000)}1${')'.repeat(100000)}`, bindings: [] })
    expect(deep).toEqual({ logs: [], error: { kind: 'exception', message: 'RangeError: Maximum call stack size exceeded\n    at program.ts:1:1' } })
    // A compile error V8 places: its 1-based column.
    const placed = await runtime.run({ program: 'let a = 1; let a = 2', bindings: [] })
    expect(placed).toEqual({ logs: [], error: { kind: 'exception', message: "SyntaxError: Identifier 'a' has already been declared\n    at program.ts:1:16" } })
  })
})

describe.each([
  ['isolate, process', () => load(IsolateCodeRuntime, { containment: 'process' }), 'return 1'],
  ['isolate, thread', () => load(IsolateCodeRuntime, { containment: 'thread' }), 'return 1'],
  ['python', () => load(PythonCodeRuntime, { pythonBin: PYTHON }), 'return 1'],
])('%s', (_, make, program) => {
  it('an unbound run (`const { run } = runtime`) returns a rejected promise that says how to call it', async () => {
    const runtime = await make()
    const { run } = runtime
    let returned
    expect(() => (returned = run({ program, bindings: [] }))).not.toThrow()
    expect(returned).toBeInstanceOf(Promise)
    await expect(returned).rejects.toThrow(
      'code-runtime-native: run() was called without its runtime (this is undefined): call it as runtime.run(request), or bind it first (runtime.run.bind(runtime))',
    )
    // Called properly, it runs.
    expect(await runtime.run({ program, bindings: [] })).toEqual({ logs: [], value: 1 })
  })

  it("cordis hands its methods out as they are, not wrapped anew at each access, and `ctx` reads as the caller's", async () => {
    const runtime = await make()
    // A shadowed method is a new proxy at each access (lib/unshadowed.mjs).
    expect(runtime.run).toBe(runtime.run)
    expect(runtime.lastRunStats).toBe(runtime.lastRunStats)
    expect(runtime.ctx).toBeInstanceOf(Context)
    const { run } = runtime
    expect(await run.call(runtime, { program, bindings: [] })).toEqual({ logs: [], value: 1 })
  })

  it('a binding rejection whose rendering throws (a Proxy that throws on every trap) is <unrenderable rejection value>', async () => {
    const runtime = await make()
    const program = _ === 'python'
      ? 'try:\n    await tools.f({})\nexcept ToolCallError as e:\n    return [type(e).__name__, str(e)]'
      : 'try { await tools.f({}) } catch (e) { return [e.name, e.message] }'
    const bindings = (f) => [{ global: 'tools', functions: { f }, errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' } }]
    const expected = { logs: [], value: ['ToolCallError', UNRENDERABLE] }
    expect(await runtime.run({ program, bindings: bindings(() => Promise.reject(unrenderable())) })).toEqual(expected)
    // Thrown synchronously, the same.
    expect(await runtime.run({ program, bindings: bindings(() => { throw unrenderable() }) })).toEqual(expected)
  })
})
