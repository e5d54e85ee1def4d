// Nothing passes a run's end (docs/budgets-and-ledger.md#nothing-passes-the-end): once a run's end
// is decided (process.exit, an output overflow, abort, a deadline), no binding the program calls
// reaches the host and nothing it prints is recorded, in both tiers and in Python. The host-side
// calls are counted by the host's own functions.
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IsolateCodeRuntime, PythonCodeRuntime } from '../lib/index.mjs'
import { Context } from 'cordis'
import { PYTHON, TOOLS, privateTmpdir } from './python-helpers.mjs'

const OUTPUT = 4096

/** Host functions that count their calls; `stop` aborts the run's signal synchronously. */
function counting(controller) {
  const calls = { count: 0, stop: 0, tick: [] }
  const functions = {
    count: async () => {
      calls.count += 1
      return calls.count
    },
    stop: async () => {
      calls.stop += 1
      controller?.abort(new Error('stopped by the host'))
      return 'stopped'
    },
    tick: async () => {
      calls.tick.push(Date.now())
      return calls.tick.length
    },
  }
  return { calls, functions }
}

for (const containment of ['process', 'thread']) {
  describe(`TypeScript, containment '${containment}'`, () => {
    let ctx
    let runtime
    beforeAll(async () => {
      ctx = new Context()
      await ctx.plugin(IsolateCodeRuntime, { containment, maxOutputBytes: OUTPUT, computeMs: 400 })
      runtime = ctx.codeRuntime
    })
    afterAll(() => ctx?.registry.delete(IsolateCodeRuntime))

    async function run(program, controller) {
      const { calls, functions } = counting(controller)
      const streamed = []
      const result = await runtime.run({
        program,
        bindings: [TOOLS(functions)],
        signal: controller?.signal,
        onLog: (line) => streamed.push(line),
      })
      return { result, calls, streamed }
    }

    it('calls nothing and records nothing after process.exit', async () => {
      const exited = { kind: 'worker-exit', message: 'program exited with code 0 before completing' }
      for (const program of [
        'process.exit(0); tools.count({})',
        'try { process.exit(0) } finally { tools.count({}) }',
        'process.exit(0); for (let i = 0; i < 5; i++) tools.count({})',
        "process.exit(0); tools.count({}); process.stdout.write('late'); tools.count({})",
        "await tools.count({}); console.log('kept'); process.exit(0); tools.count({}); tools.count({})",
      ]) {
        const { result, calls, streamed } = await run(program)
        expect(result.error, program).toEqual(exited)
        const before = program.startsWith('await') ? 1 : 0
        expect(calls.count, program).toBe(before)
        expect(result.logs, program).toEqual(before ? ['kept'] : [])
        expect(streamed, program).toEqual(result.logs)
      }
    })

    it('calls nothing after an output overflow', async () => {
      for (const program of [
        `console.log('x'.repeat(${OUTPUT * 2})); tools.count({}); tools.count({})`,
        `process.stdout.write('x'.repeat(${OUTPUT * 2})); tools.count({}); process.stdout.write('late')`,
        `try { console.log('x'.repeat(${OUTPUT * 2})) } finally { tools.count({}) }`,
      ]) {
        const { result, calls } = await run(program)
        expect(result.error?.kind, program).toBe('output-limit')
        expect(calls.count, program).toBe(0)
        expect(result.logs.join('').includes('late'), program).toBe(false)
      }
    })

    it('calls nothing after the host aborted, however the program keeps calling', async () => {
      for (const program of [
        'tools.stop({}); tools.count({}); tools.count({}); await new Promise(() => {})',
        'tools.stop({}); for (let i = 0; i < 100; i++) tools.count({}); for (;;) {}',
        'await tools.count({}); tools.stop({}); for (let i = 0; i < 100; i++) tools.count({}); await new Promise(() => {})',
      ]) {
        const controller = new AbortController()
        const { result, calls } = await run(program, controller)
        expect(result.error, program).toEqual({ kind: 'abort', message: 'Error: stopped by the host' })
        expect(calls.stop, program).toBe(1)
        expect(calls.count, program).toBe(program.startsWith('await') ? 1 : 0)
      }
    })

    it('calls nothing once the compute budget ended a program that calls in a loop', async () => {
      // Every call made before the claim may reach the host; none after it: the run resolves and
      // the count stays where it was when it resolved.
      const { result, calls } = await run('for (;;) await tools.count({})')
      expect(result.error?.kind).toBe('timeout')
      const atEnd = calls.count
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(calls.count).toBe(atEnd)
    })
  })
}

describe('Python', () => {
  let ctx
  let runtime
  let tmp
  beforeAll(async () => {
    tmp = privateTmpdir('run-end')
    ctx = new Context()
    await ctx.plugin(PythonCodeRuntime, { pythonBin: PYTHON, maxWallMs: 600, graceMs: 1500 })
    runtime = ctx.get('codeRuntime')
  })
  afterAll(() => {
    ctx?.registry.delete(PythonCodeRuntime)
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('records no log and calls no binding while a program that ignores SIGTERM outlives its deadline', async () => {
    const { calls, functions } = counting()
    const started = Date.now()
    const result = await runtime.run({
      program: [
        'import signal, asyncio',
        'signal.signal(signal.SIGTERM, signal.SIG_IGN)',
        'i = 0',
        'while True:',
        '    i += 1',
        '    print(i)',
        '    asyncio.ensure_future(tools.tick({}))',
        '    await asyncio.sleep(0.02)',
      ].join('\n'),
      bindings: [TOOLS(functions)],
    })
    expect(result.error).toEqual({ kind: 'timeout', message: 'wall-clock ceiling reached (600ms)' })
    // The deadline is 600 ms after the run began; the grace lasts 1500 ms more. Before the fix
    // the child went on printing (and, without the host's check, calling) through the grace.
    const late = calls.tick.filter((at) => at > started + 600 + 250)
    expect(late).toEqual([])
    expect(result.logs.length).toBeLessThanOrEqual(calls.tick.length + 1)
    expect(result.logs.length).toBeGreaterThan(0)
  })

  it('calls nothing after the host aborted, though the program made the calls at once', async () => {
    const controller = new AbortController()
    const { calls, functions } = counting(controller)
    const result = await runtime.run({
      program: [
        'import asyncio',
        'tasks = [asyncio.ensure_future(tools.stop({}))] + [asyncio.ensure_future(tools.count({})) for _ in range(5)]',
        'await asyncio.sleep(5)',
      ].join('\n'),
      bindings: [TOOLS(functions)],
      signal: controller.signal,
    })
    expect(result.error).toEqual({ kind: 'abort', message: 'stopped by the host' })
    expect(calls.stop).toBe(1)
    expect(calls.count).toBe(0)
  })
})

// docs/budgets-and-ledger.md#the-hosts-memory: what a program can leave waiting in the host.
const PENDING = 'more than 128 binding calls were pending at once (maxPendingCalls): await calls before making more'

/** The host's peak RSS growth (MiB) while `work` runs, sampled every few milliseconds. */
async function peakGrowthMb(work) {
  globalThis.gc?.()
  const base = process.memoryUsage.rss()
  let peak = base
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 2)
  try {
    const result = await work()
    peak = Math.max(peak, process.memoryUsage.rss())
    return { result, growthMb: (peak - base) / 1048576 }
  } finally {
    clearInterval(timer)
  }
}

for (const containment of ['process', 'thread']) {
  describe(`the host's memory, TypeScript, containment '${containment}'`, () => {
    let ctx
    let runtime
    beforeAll(async () => {
      ctx = new Context()
      await ctx.plugin(IsolateCodeRuntime, { containment, computeMs: 3000 })
      runtime = ctx.codeRuntime
    })
    afterAll(() => ctx?.registry.delete(IsolateCodeRuntime))

    const never = () => new Promise(() => {})

    it('one call more than maxPendingCalls ends the run before it reaches the host', async () => {
      let calls = 0
      const bindings = [TOOLS({ never: () => (calls++, never()) })]
      // The first 128 reach the host while the program sleeps; the 129th ends the run.
      const program = 'for (let i = 0; i < 128; i++) tools.never({}); await new Promise((r) => setTimeout(r, 100)); tools.never({}); await tools.never({})'
      const over = await runtime.run({ program, bindings })
      expect(over).toEqual({ logs: [], error: { kind: 'worker-exit', message: PENDING } })
      expect(calls).toBe(128)
      calls = 0
      const exact = await runtime.run({ program: 'for (let i = 0; i < 128; i++) tools.never({}); return "ok"', bindings })
      expect(exact).toEqual({ logs: [], value: 'ok' })
    })

    it('calls awaited one by one are never pending together', async () => {
      const bindings = [TOOLS({ echo: async (x) => x })]
      const result = await runtime.run({ program: 'let n = 0; for (let i = 0; i < 1000; i++) n += await tools.echo(1); return n', bindings })
      expect(result).toEqual({ logs: [], value: 1000 })
    })

    it('800 unawaited calls with 512 KiB replies, then a spin: the run ends, the host does not grow by the replies', async () => {
      const reply = 'r'.repeat(512 * 1024)
      const bindings = [TOOLS({ big: async () => reply })]
      const { result, growthMb } = await peakGrowthMb(() =>
        runtime.run({ program: 'for (let i = 0; i < 800; i++) tools.big({}); for (;;) {}', bindings }),
      )
      expect(result).toEqual({ logs: [], error: { kind: 'worker-exit', message: PENDING } })
      // 128 replies of 512 KiB at most are queued (64 MiB); before the cap it grew ~420 MiB.
      expect(growthMb).toBeLessThan(200)
    })

    it('replies a spinning program never takes are capped in bytes', async () => {
      const reply = 'r'.repeat(1024 * 1024)
      const bindings = [TOOLS({ big: async () => reply })]
      const { result, growthMb } = await peakGrowthMb(() =>
        runtime.run({ program: 'for (let i = 0; i < 120; i++) tools.big({}); for (;;) {}', bindings }),
      )
      expect(result.error.kind).toBe('worker-exit')
      expect(result.error.message).toMatch(/^reply queue exceeded 67108864 bytes (for the isolate|on the isolate process's channel) \(the program stopped taking its replies\)$/)
      expect(growthMb).toBeLessThan(250)
    })

    it('maxPendingCalls is the config\'s', async () => {
      const small = new Context()
      await small.plugin(IsolateCodeRuntime, { containment, maxPendingCalls: 2 })
      let calls = 0
      const bindings = [TOOLS({ never: () => (calls++, never()) })]
      const program = 'tools.never({}); tools.never({}); await new Promise((r) => setTimeout(r, 100)); tools.never({})'
      const result = await small.codeRuntime.run({ program, bindings })
      expect(result.error).toEqual({ kind: 'worker-exit', message: PENDING.replace('128', '2') })
      expect(calls).toBe(2)
      small.registry.delete(IsolateCodeRuntime)
      for (const bad of [0, 1.5, 65537]) {
        const c = new Context()
        await expect(c.plugin(IsolateCodeRuntime, { containment, maxPendingCalls: bad })).rejects.toThrow(
          `config.maxPendingCalls must be an integer from 1 to 65536, got ${bad}`,
        )
      }
    })
  })
}

describe("the host's memory, Python", () => {
  let ctx
  let runtime
  let tmp
  beforeAll(async () => {
    tmp = privateTmpdir('run-end-memory')
    ctx = new Context()
    await ctx.plugin(PythonCodeRuntime, { pythonBin: PYTHON, cpuSeconds: 30 })
    runtime = ctx.get('codeRuntime')
  })
  afterAll(() => {
    ctx?.registry.delete(PythonCodeRuntime)
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  // Replies come once the program is spinning, so it never takes one. While it is still writing
  // its calls the child takes in what the host has answered, so a reply sent that early would
  // leave which cap ends the run (or whether one does) to the race between the two processes.
  const LATE_MS = 300
  const late = (reply) => async () => (await new Promise((resolve) => setTimeout(resolve, LATE_MS)), reply)
  const spinAfter = (calls) =>
    ['import asyncio', `for i in range(${calls}):`, '    asyncio.ensure_future(tools.big(i))', 'await asyncio.sleep(0)', 'while True: pass'].join('\n')

  it('800 unawaited calls with 512 KiB replies, then a spin: the pending-calls cap ends the run before one reply is held', async () => {
    const bindings = [TOOLS({ big: late('r'.repeat(512 * 1024)) })]
    const started = Date.now()
    const { result, growthMb } = await peakGrowthMb(() => runtime.run({ program: spinAfter(800), bindings }))
    expect(result.error).toEqual({ kind: 'worker-exit', message: expect.stringMatching(/^more than 128 binding calls were pending at once/) })
    expect(growthMb).toBeLessThan(200)
    console.log(`python: pending-calls cap after ${Date.now() - started} ms, host grew ${growthMb.toFixed(0)} MiB`)
  })

  it('100 unawaited calls with 1 MiB replies, then a spin: the reply-queue cap, the host does not grow by the replies', async () => {
    const bindings = [TOOLS({ big: late('r'.repeat(1024 * 1024)) })]
    const started = Date.now()
    const { result, growthMb } = await peakGrowthMb(() => runtime.run({ program: spinAfter(100), bindings }))
    expect(result.error).toEqual({ kind: 'worker-exit', message: expect.stringMatching(/^reply queue exceeded 67108864 bytes on fd 3/) })
    expect(growthMb).toBeLessThan(200)
    console.log(`python: reply-queue cap after ${Date.now() - started} ms, host grew ${growthMb.toFixed(0)} MiB`)
  })
})
