// Budgets, abort, dispose, timers and never-settling programs (docs/typescript.md#web-globals,
// docs/budgets-and-ledger.md#typescript-budgets).
// The host process must stay healthy after every one: each test runs a normal program afterwards.
import { getEventListeners } from 'node:events'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadIsolate, runThreads, threadCount, tools } from './helpers.mjs'

const timeout = (message) => ({ logs: [], error: { kind: 'timeout', message } })

async function healthy(runtime) {
  expect(await runtime.run({ program: "return 'alive'", bindings: [] })).toEqual({ logs: [], value: 'alive' })
}

describe('compute budget (thread CPU time)', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate({ computeMs: 300 }))
  })
  afterAll(() => fiber.dispose())

  it('stops a hot loop', async () => {
    expect(await runtime.run({ program: 'for (;;) {}', bindings: [] })).toEqual(timeout('compute budget exhausted (300ms busy) at program.ts:1:1'))
    await healthy(runtime)
  })

  it('keeps counting while an unawaited binding call is pending', async () => {
    const { namespace } = tools({ slow: () => new Promise((r) => setTimeout(() => r('late'), 5000)) })
    expect(await runtime.run({ program: 'void tools.slow({}); for (;;) {}', bindings: [namespace] }))
      .toEqual(timeout('compute budget exhausted (300ms busy) at program.ts:1:22; 1 tool call pending: tools.slow'))
  })

  it('cannot be caught, in finally blocks, microtasks or after a catch', async () => {
    for (const [program, where] of [
      ['try { for (;;) {} } catch {} finally { for (;;) {} }', ' at program.ts:1:7'],
      ['queueMicrotask(function again() { queueMicrotask(again) }); await new Promise(() => {})', ' at program.ts:1:30 in again()'],
      ['await null; for (;;) { try { for (;;) {} } catch {} }', ' at program.ts:1:30'],
      ['setTimeout(() => { for (;;) {} }, 0); await new Promise(r => setTimeout(r, 100000))', ' at program.ts:1:20'],
    ]) {
      expect(await runtime.run({ program, bindings: [] })).toEqual(timeout(`compute budget exhausted (300ms busy)${where}`))
    }
    await healthy(runtime)
  })

  it('reports the thread CPU time in the stats', async () => {
    let stats
    await runtime.run({ program: 'for (;;) {}', bindings: [], onStats: (s) => (stats = s) })
    expect(stats.cpuMs).toBeGreaterThanOrEqual(250)
    expect(runtime.lastRunStats()).toBe(stats)
    expect(Object.keys(stats).sort()).toEqual(['callCount', 'calls', 'cpuMs', 'heapPeakBytes', 'heapUsedBytes', 'stoppedAt', 'wallMs'])
    // The budget stopped the loop on line 1 (docs/tracing.md#where-a-run-stopped).
    expect(stats.stoppedAt).toStrictEqual({ line: 1, column: 1 })
  })
})

describe('time spent waiting is not compute', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate({ computeMs: 1000 }))
  })
  afterAll(() => fiber.dispose())

  it('lets a program await a 1.5 s binding and a 1.5 s timer', async () => {
    const { namespace } = tools({ slow: () => new Promise((r) => setTimeout(() => r('slow-done'), 1500)) })
    let stats
    const result = await runtime.run({ program: 'return await tools.slow({})', bindings: [namespace], onStats: (s) => (stats = s) })
    expect(result).toEqual({ logs: [], value: 'slow-done' })
    expect(stats.wallMs).toBeGreaterThanOrEqual(1400)
    expect(stats.cpuMs).toBeLessThan(stats.wallMs / 5)
    expect(await runtime.run({ program: 'await new Promise(r => setTimeout(r, 1500)); return 1', bindings: [] }))
      .toEqual({ logs: [], value: 1 })
  })
})

describe('wall ceiling', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate({ maxWallMs: 400 }))
  })
  afterAll(() => fiber.dispose())

  it('ends a run awaiting a binding that never resolves', async () => {
    const { namespace } = tools({ never: () => new Promise(() => {}) })
    expect(await runtime.run({ program: 'await tools.never({})', bindings: [namespace] }))
      .toEqual(timeout('wall-clock ceiling reached (400ms); 1 tool call pending: tools.never'))
  })

  it('ends a run kept alive by an interval', async () => {
    expect(await runtime.run({ program: 'setInterval(() => {}, 10); await new Promise(() => {})', bindings: [] }))
      .toEqual(timeout('wall-clock ceiling reached (400ms)'))
    await healthy(runtime)
  })
})

describe('never-settling programs', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate())
  })
  afterAll(() => fiber.dispose())

  const neverSettles = {
    logs: [],
    error: { kind: 'exception', message: 'program can never complete: it awaits a promise that nothing can settle' },
  }

  it('end at once instead of waiting for the wall ceiling', async () => {
    const started = Date.now()
    expect(await runtime.run({ program: 'await new Promise(() => {})', bindings: [] })).toEqual(neverSettles)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await runtime.run({
      program: 'const t = setTimeout(() => {}, 50); clearTimeout(t); await new Promise(() => {})',
      bindings: [],
    })).toEqual(neverSettles)
    expect(await runtime.run({
      program: 'const i = setInterval(() => clearInterval(i), 5); await new Promise(() => {})',
      bindings: [],
    })).toEqual(neverSettles)
  })

  it('counts pending timers and binding calls as work', async () => {
    expect(await runtime.run({ program: 'await new Promise(r => setTimeout(r, 200)); return 1', bindings: [] }))
      .toEqual({ logs: [], value: 1 })
    const { namespace } = tools({ later: () => new Promise((r) => setTimeout(() => r(7), 100)) })
    expect(await runtime.run({ program: 'return await tools.later({})', bindings: [namespace] })).toEqual({ logs: [], value: 7 })
  })
})

describe('timers and microtasks', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate())
  })
  afterAll(() => fiber.dispose())

  it('fire in order of due time, then creation, each followed by its microtasks', async () => {
    const program = `const seen = []
      setTimeout(() => seen.push('b'), 20)
      setTimeout((x, y) => { seen.push('a' + x + y); queueMicrotask(() => seen.push('micro')) }, 5, 1, 2)
      setTimeout(() => seen.push('c'), 20)
      setTimeout(() => seen.push('nan'), NaN)
      setTimeout(() => seen.push('huge'), 2 ** 40)
      await new Promise(r => setTimeout(r, 60))
      return seen`
    expect((await runtime.run({ program, bindings: [] })).value).toEqual(['nan', 'huge', 'a12', 'micro', 'b', 'c'])
  })

  it('clear with either clear function, repeat, and refuse non-functions', async () => {
    const program = `let n = 0
      const i = setInterval(() => { if (++n === 3) clearTimeout(i) }, 1)
      const t = setTimeout(() => { n = 100 }, 1); clearInterval(t)
      await new Promise(r => setTimeout(r, 50))
      const errors = []
      for (const f of [setTimeout, setInterval, queueMicrotask]) { try { f('not a function') } catch (e) { errors.push(e instanceof TypeError) } }
      return [n, errors]`
    expect((await runtime.run({ program, bindings: [] })).value).toEqual([3, [true, true, true]])
  })
})

describe('heap cap', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate({ maxOldGenerationSizeMb: 32 }))
  })
  afterAll(() => fiber.dispose())

  const heapLimit = { logs: [], error: { kind: 'worker-exit', message: 'isolate heap limit reached (32 MiB)' } }

  it('ends a run that allocates without end, and the host stays up', async () => {
    expect(await runtime.run({ program: 'const a = []; for (;;) a.push(new Array(1e6))', bindings: [] })).toEqual(heapLimit)
    await healthy(runtime)
    expect(await runtime.run({ program: "const a = []; for (let i = 0; ; i++) a.push('x'.repeat(1e5) + i)", bindings: [] }))
      .toEqual(heapLimit)
    await healthy(runtime)
  })

  it('survives a single allocation far beyond the cap', async () => {
    expect(await runtime.run({ program: 'const a = new Array(2e7).fill(1.5); return a.length', bindings: [] })).toEqual(heapLimit)
    await healthy(runtime)
  })

  it('caps ArrayBuffer memory with a catchable RangeError', async () => {
    expect((await runtime.run({ program: 'try { new ArrayBuffer(2 ** 31) } catch (e) { return String(e) }', bindings: [] })).value)
      .toBe('RangeError: Array buffer allocation failed')
    const typed = await runtime.run({
      program: 'const kept = []; try { for (;;) kept.push(new Uint8Array(1e6)) } catch (e) { return [kept.length < 40, e instanceof RangeError] }',
      bindings: [],
    })
    expect(typed.value).toEqual([true, true])
    await healthy(runtime)
  })

  it('does not disturb concurrent runs', async () => {
    const runs = Array.from({ length: 16 }, (_, i) =>
      i === 7
        ? runtime.run({ program: 'const a = []; for (;;) a.push(new Array(1e6))', bindings: [] })
        : runtime.run({ program: `await new Promise(r => setTimeout(r, ${i * 3})); return ${i}`, bindings: [] }))
    const results = await Promise.all(runs)
    results.forEach((result, i) => expect(result).toEqual(i === 7 ? heapLimit : { logs: [], value: i }))
  })
})

describe('abort', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate())
  })
  afterAll(() => fiber.dispose())

  it('stops a synchronous loop and removes its listener', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort('user-cancel'), 150)
    expect(await runtime.run({ program: 'for (;;) {}', bindings: [], signal: controller.signal }))
      .toEqual({ logs: [], error: { kind: 'abort', message: 'user-cancel' } })
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    await healthy(runtime)
  })

  it('renders a bare abort and an unrenderable reason', async () => {
    const bare = new AbortController()
    setTimeout(() => bare.abort(), 20)
    expect((await runtime.run({ program: 'await new Promise(r => setTimeout(r, 5000))', bindings: [], signal: bare.signal })).error)
      .toEqual({ kind: 'abort', message: 'AbortError: This operation was aborted' })
    const weird = new AbortController()
    setTimeout(() => weird.abort({ toString() { throw new Error('no') } }), 20)
    expect((await runtime.run({ program: 'for (;;) {}', bindings: [], signal: weird.signal })).error)
      .toEqual({ kind: 'abort', message: '<unrenderable rejection value>' })
  })

  it('keeps every code unit of an abort reason, lone surrogates included', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort('stop\uD800here\uDFFF'), 50)
    expect(await runtime.run({ program: 'for (;;) {}', bindings: [], signal: controller.signal }))
      .toEqual({ logs: [], error: { kind: 'abort', message: 'stop\uD800here\uDFFF' } })
    const waiting = new AbortController()
    setTimeout(() => waiting.abort('\uDC00'), 50)
    expect((await runtime.run({ program: 'await new Promise(r => setTimeout(r, 5000))', bindings: [], signal: waiting.signal })).error)
      .toEqual({ kind: 'abort', message: '\uDC00' })
  })

  it('resolves a pre-aborted signal without creating an isolate', async () => {
    let stats
    expect(await runtime.run({ program: 'for (;;) {}', bindings: [], signal: AbortSignal.abort('too-late'), onStats: (s) => (stats = s) }))
      .toEqual({ logs: [], error: { kind: 'abort', message: 'too-late' } })
    expect(stats).toEqual({ cpuMs: 0, wallMs: 0, heapUsedBytes: 0, heapPeakBytes: 0, calls: [], callCount: 0 })
    expect((await runtime.run({ program: '', bindings: [], signal: AbortSignal.abort({ toString() { throw 1 } }) })).error.message)
      .toBe('<unrenderable rejection value>')
  })

  it('changes nothing when it fires after the run resolved', async () => {
    const controller = new AbortController()
    const result = await runtime.run({ program: 'return 1', bindings: [], signal: controller.signal })
    controller.abort('late')
    expect(result).toEqual({ logs: [], value: 1 })
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('keeps the first terminal event', async () => {
    expect(await runtime.run({ program: "setTimeout(() => { throw new Error('late') }, 0); return 'ok'", bindings: [] }))
      .toEqual({ logs: [], value: 'ok' })
  })
})

describe('dispose', () => {
  it('ends in-flight runs, joins their threads, then refuses new runs', async () => {
    const before = await threadCount()
    const earlier = await runThreads()
    // Enough sandbox processes for all seven to be in flight at once (none waits for admission).
    const { runtime, fiber, ctx } = await loadIsolate({ maxProcesses: 8 })
    let called
    const reached = new Promise((r) => (called = r))
    const { namespace } = tools({ never: () => { called(); return new Promise(() => {}) } })
    const inflight = [
      ...Array.from({ length: 5 }, () => runtime.run({ program: 'for (;;) {}', bindings: [] })),
      runtime.run({ program: "console.log('kept'); await tools.never({})", bindings: [namespace] }),
      runtime.run({ program: 'await new Promise(r => setTimeout(r, 100000))', bindings: [] }),
    ]
    // In flight: the binding was reached (a sandbox process may take a while to start on a
    // loaded machine), and the others had time to start.
    await reached
    await new Promise((r) => setTimeout(r, 100))
    const ours = [...(await runThreads())].filter((id) => !earlier.has(id))
    expect(ours.length).toBeGreaterThanOrEqual(7)
    await fiber.dispose()
    const left = [...(await runThreads())].filter((id) => !earlier.has(id))
    expect(left).toEqual([])
    expect(await threadCount()).toBeLessThanOrEqual(before + 1) // the watchdog thread may persist
    const results = await Promise.all(inflight)
    for (const result of results.slice(0, 5)) {
      expect(result).toEqual({ logs: [], error: { kind: 'abort', message: 'runtime disposed' } })
    }
    expect(results[5]).toEqual({ logs: ['kept'], error: { kind: 'abort', message: 'runtime disposed' } })
    await expect(runtime.run({ program: 'return 1', bindings: [] })).rejects.toThrow(
      'code-runtime-native: run() after disposal',
    )
    expect(ctx.get('codeRuntime')).toBeUndefined()
  })
})

describe('process health', () => {
  it('leaves nothing that keeps the event loop alive and writes nothing to the host', () => {
    const entry = fileURLToPath(new URL('../lib/index.mjs', import.meta.url))
    const root = fileURLToPath(new URL('..', import.meta.url))
    const script = `
      import { Context } from 'cordis'
      import { IsolateCodeRuntime } from ${JSON.stringify(entry)}
      const ctx = new Context()
      await ctx.plugin(IsolateCodeRuntime)
      const runtime = ctx.codeRuntime
      for (const program of ["queueMicrotask(() => { throw new Error('x') }); await null", 'Promise.reject(1)', 'for (;;) {}']) {
        await runtime.run({ program, bindings: [], signal: AbortSignal.timeout(200) })
      }
      const result = await runtime.run({ program: 'await new Promise(r => setTimeout(r, 20)); return 1', bindings: [{ global: 'tools', functions: { f: async () => 1 } }] })
      console.log(JSON.stringify(result))`
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 20000 })
    expect(child.status).toBe(0)
    expect(child.stdout.trim()).toBe('{"logs":[],"value":1}')
    // Nothing the programs did reached the host's output streams.
    expect(child.stderr).toBe('')
  })

  it('keeps RSS near its baseline over 1000 sequential runs', async () => {
    const { runtime, fiber } = await loadIsolate()
    for (let i = 0; i < 100; i++) await runtime.run({ program: 'return [1, { a: "x" }]', bindings: [] })
    const baseline = process.memoryUsage().rss
    for (let i = 0; i < 1000; i++) await runtime.run({ program: 'console.log("x"); return [1, { a: "x" }]', bindings: [] })
    const growth = process.memoryUsage().rss - baseline
    expect(growth).toBeLessThan(64 * 1024 * 1024)
    await fiber.dispose()
  })
})
