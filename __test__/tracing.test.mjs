// What happened to each binding call (`stats.calls`) and the traces of runs and calls
// (docs/tracing.md): Node's diagnostics channels and a real OpenTelemetry SDK, in real isolates
// (both tiers), real Python children, on both seams. What a program could try: make its calls'
// numbers depend on how the host settles them, leave calls pending when it ends, make more calls
// than are recorded, or end by a budget with calls in flight.
import fs from 'node:fs'
import { AsyncLocalStorage } from 'node:async_hooks'
import dc from 'node:diagnostics_channel'
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { IsolateCodeRuntime, IsolatePtcRuntime, PythonCodeRuntime, PythonPtcRuntime } from '../lib/index.mjs'
import { MAX_CALL_RECORDS } from '../lib/call-log.mjs'
import { PYTHON, privateTmpdir } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 })
const TMP = privateTmpdir('tracing')

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const contextManager = new AsyncLocalStorageContextManager().enable()
context.setGlobalContextManager(contextManager)
afterAll(() => {
  context.disable()
  fs.rmSync(TMP, { recursive: true, force: true })
})

async function load(Class, config = {}) {
  const ctx = new Context()
  const python = Class === PythonCodeRuntime || Class === PythonPtcRuntime
  const fiber = await ctx.plugin(Class, python ? { pythonBin: PYTHON, ...config } : config)
  const runtime = ctx.get(Class === IsolatePtcRuntime || Class === PythonPtcRuntime ? 'ptcRuntime' : 'codeRuntime')
  return { fiber, runtime }
}

const tools = (functions) => [{ global: 'tools', functions }]

// The same programs in both languages: what differs is only how each spells them.
const LANGUAGES = {
  typescript: {
    Class: IsolateCodeRuntime,
    gather: 'const r = await Promise.all([tools.a({ i: 0 }), tools.b({ i: 1 }), tools.a({ i: 2 })]); return r',
    rejectAndLeave: 'try { await tools.boom({}) } catch {} ; tools.slow({ left: true }); await new Promise((r) => setTimeout(r, 20)); return 1',
    many: (n) => `for (let i = 0; i < ${n}; i++) await tools.ping({}); return ${n}`,
    waitForever: 'await tools.never({}); return 1',
    one: 'return await tools.a({ i: 7 })',
  },
  python: {
    Class: PythonCodeRuntime,
    gather: 'import asyncio\nreturn list(await asyncio.gather(tools.a({"i": 0}), tools.b({"i": 1}), tools.a({"i": 2})))',
    rejectAndLeave:
      'import asyncio\ntry:\n    await tools.boom({})\nexcept Exception:\n    pass\nleft = asyncio.ensure_future(tools.slow({"left": True}))\nawait asyncio.sleep(0.02)\nreturn 1',
    many: (n) => `for i in range(${n}):\n    await tools.ping({})\nreturn ${n}`,
    waitForever: 'await tools.never({})\nreturn 1',
    one: 'return await tools.a({"i": 7})',
  },
}

const CASES = [
  ['typescript', 'process'],
  ['typescript', 'thread'],
  ['python', undefined],
]

describe.each(CASES)('stats.calls: %s %s', (language, containment) => {
  const L = LANGUAGES[language]
  let R
  beforeAll(async () => {
    R = await load(L.Class, { ...(containment && { containment }), maxWallMs: 2000 })
  })
  afterAll(() => R.fiber.dispose())

  it('numbers calls made together in the order the program made them, however the host settles them', async () => {
    const seen = []
    for (let attempt = 0; attempt < 4; attempt++) {
      // Each attempt settles the three calls in another order.
      const delays = [[30, 10, 0], [0, 10, 30], [10, 0, 20], [0, 0, 0]][attempt]
      const reply = async ({ i }) => {
        await sleep(delays[i])
        return i * 10
      }
      let stats
      const began = performance.now()
      const result = await R.runtime.run({ program: L.gather, bindings: tools({ a: reply, b: reply }), onStats: (s) => (stats = s) })
      const took = performance.now() - began
      expect(result).toStrictEqual({ logs: [], value: [0, 10, 20] })
      expect(R.runtime.lastRunStats()).toBe(stats)
      expect(stats.callCount).toBe(3)
      seen.push(stats.calls.map(({ seq, name, argBytes, outcome, resultBytes }) => ({ seq, name, argBytes, outcome, resultBytes })))
      for (const record of stats.calls) {
        expect(Object.isFrozen(record)).toBe(true)
        expect(record.settledMs).toBeGreaterThanOrEqual(record.startedMs)
        expect(record.settledMs).toBeLessThanOrEqual(took)
      }
    }
    const argBytes = 7 // `{"i":0}`: both languages send compact JSON
    expect(seen[0]).toStrictEqual([
      { seq: 1, name: 'tools.a', argBytes, outcome: 'resolved', resultBytes: 1 },
      { seq: 2, name: 'tools.b', argBytes, outcome: 'resolved', resultBytes: 2 },
      { seq: 3, name: 'tools.a', argBytes, outcome: 'resolved', resultBytes: 2 },
    ])
    for (const other of seen.slice(1)) expect(other).toStrictEqual(seen[0])
  })

  it('a rejected call, and one still pending when the program ended, which is abandoned', async () => {
    let settleSlow
    const slow = new Promise((r) => (settleSlow = r))
    const result = await R.runtime.run({
      program: L.rejectAndLeave,
      bindings: tools({ boom: async () => { throw new TypeError('no such thing') }, slow: () => slow }),
    })
    expect(result).toStrictEqual({ logs: [], value: 1 })
    const { calls, callCount } = R.runtime.lastRunStats()
    expect(callCount).toBe(2)
    expect(calls).toStrictEqual([
      {
        seq: 1, name: 'tools.boom', startedMs: expect.any(Number), settledMs: expect.any(Number),
        outcome: 'rejected', argBytes: 2, resultBytes: Buffer.byteLength(JSON.stringify('no such thing')),
      },
      {
        seq: 2, name: 'tools.slow', startedMs: expect.any(Number), outcome: 'abandoned',
        argBytes: Buffer.byteLength('{"left":true}'), resultBytes: 0,
      },
    ])
    // Settling it afterwards changes nothing recorded.
    settleSlow(5)
    await sleep(10)
    expect(R.runtime.lastRunStats().calls[1].outcome).toBe('abandoned')
  })

  it(`records the first ${MAX_CALL_RECORDS} calls and counts every one`, async () => {
    const n = MAX_CALL_RECORDS + 5
    const result = await R.runtime.run({ program: L.many(n), bindings: tools({ ping: () => null }) })
    expect(result).toStrictEqual({ logs: [], value: n })
    const { calls, callCount } = R.runtime.lastRunStats()
    expect(callCount).toBe(n)
    expect(calls).toHaveLength(MAX_CALL_RECORDS)
    expect(calls.at(-1).seq).toBe(MAX_CALL_RECORDS)
    expect(calls.every((c, i) => c.seq === i + 1 && c.outcome === 'resolved' && c.resultBytes === 4)).toBe(true)
  })

  it('a run ended by its wall ceiling with a call in flight: the call is abandoned', async () => {
    const result = await R.runtime.run({ program: L.waitForever, bindings: tools({ never: () => new Promise(() => {}) }) })
    expect(result.error.kind).toBe('timeout')
    const { calls } = R.runtime.lastRunStats()
    expect(calls).toStrictEqual([
      { seq: 1, name: 'tools.never', startedMs: expect.any(Number), outcome: 'abandoned', argBytes: 2, resultBytes: 0 },
    ])
  })

  it("the host's function runs in the async context run() was called in", async () => {
    const als = new AsyncLocalStorage()
    const bindings = tools({ a: () => als.getStore() })
    const results = await Promise.all(['first', 'second'].map((store) => als.run(store, () => R.runtime.run({ program: L.one, bindings }))))
    expect(results).toStrictEqual([{ logs: [], value: 'first' }, { logs: [], value: 'second' }])
  })

  it('a run that never started has no calls', async () => {
    let stats
    await R.runtime.run({ program: L.one, bindings: [], signal: AbortSignal.abort('early'), onStats: (s) => (stats = s) })
    if (language === 'python') {
      // A Python run refused before its child exists reports no stats at all.
      expect(stats).toBeUndefined()
    } else {
      expect(stats.calls).toStrictEqual([])
      expect(stats.callCount).toBe(0)
    }
  })
})

describe('what a program cannot make the records say', () => {
  it('a Python program writing its own call frames to fd 3: out-of-order ids are ignored, unbound names answered inside', async () => {
    const R = await load(PythonCodeRuntime)
    try {
      let hostCalls = 0
      const program = [
        'import os',
        // Ids the host is not expecting, and a name nobody bound: neither reaches the host.
        'os.write(3, b\'{"type":"call","id":7,"global":"tools","name":"a","args":{}}\\n\')',
        'os.write(3, b\'{"type":"call","id":41,"global":"tools","name":"a","args":{}}\\n\')',
        'try:',
        '    await tools.unbound({})',
        'except Exception as e:',
        '    missing = str(e)',
        'return [await tools.a({"i": 1}), missing]',
      ].join('\n')
      const result = await R.runtime.run({ program, bindings: tools({ a: ({ i }) => (hostCalls++, i) }) })
      expect(result.value?.[0]).toBe(1)
      expect(result.value[1]).toMatch(/unbound/)
      expect(hostCalls).toBe(1)
      const { calls, callCount } = R.runtime.lastRunStats()
      expect(callCount).toBe(1)
      expect(calls.map(({ seq, name, outcome }) => [seq, name, outcome])).toStrictEqual([[1, 'tools.a', 'resolved']])
    } finally {
      await R.fiber.dispose()
    }
  })

  it.each([['typescript', IsolatePtcRuntime], ['python', PythonPtcRuntime]])(
    '%s: a call past maxMessageBytes never reaches the host and is abandoned with the run',
    async (language, Class) => {
      const R = await load(Class, { maxMessageBytes: 1024, timeoutMs: 10_000 })
      try {
        let hostCalls = 0
        const program = language === 'python'
          ? 'await tools.a({"i": 1})\nawait tools.a({"big": "x" * 5000})\nreturn 1'
          : "await tools.a({ i: 1 }); await tools.a({ big: 'x'.repeat(5000) }); return 1"
        const result = await R.runtime.run(R.runtime.resolve({ program, bindings: tools({ a: () => (hostCalls++, 0) }) }))
        expect(result.error.kind).toBe('protocol')
        expect(hostCalls).toBe(1)
        const { calls } = R.runtime.lastRunStats()
        expect(calls.map(({ seq, outcome }) => [seq, outcome])).toStrictEqual([[1, 'resolved'], [2, 'abandoned']])
        expect(calls[1].argBytes).toBeGreaterThan(5000)
        expect(calls[1].settledMs).toBeUndefined()
      } finally {
        await R.fiber.dispose()
      }
    },
  )
})

describe('the diagnostics channels', () => {
  const runs = dc.tracingChannel('code-runtime-native:run')
  const calls = dc.tracingChannel('code-runtime-native:binding')

  it.each(CASES)('%s %s: start and end of each run and call, in order, with their results', async (language, containment) => {
    const L = LANGUAGES[language]
    const R = await load(L.Class, containment ? { containment } : {})
    const events = []
    const handlers = (what) => ({
      start: (m) => events.push([what, 'start', m.seq ?? m.language]),
      end: () => {},
      asyncStart: () => {},
      asyncEnd: (m) => events.push([what, 'asyncEnd', m.seq ?? m.result, m.stats?.callCount]),
      error: (m) => events.push([what, 'error', m.seq, m.error?.message]),
    })
    const runHandlers = handlers('run')
    const callHandlers = handlers('call')
    const store = new AsyncLocalStorage()
    runs.subscribe(runHandlers)
    calls.subscribe(callHandlers)
    // A subscriber's store is the binding's while the host's function runs.
    calls.start.bindStore(store, (message) => `call #${message.seq} of ${message.run.language}`)
    try {
      expect(runs.hasSubscribers).toBe(true)
      const bindings = tools({ a: () => store.getStore(), boom: () => { throw new RangeError('bad') } })
      const program = language === 'python'
        ? 'x = await tools.a({})\ntry:\n    await tools.boom({})\nexcept Exception as e:\n    return [x, str(e)]'
        : 'const x = await tools.a({}); try { await tools.boom({}) } catch (e) { return [x, e.message] }'
      const result = await R.runtime.run({ program, bindings })
      expect(result).toStrictEqual({ logs: [], value: [`call #1 of ${language}`, 'bad'] })
      expect(events).toStrictEqual([
        ['run', 'start', language],
        ['call', 'start', 1],
        ['call', 'asyncEnd', 1, undefined],
        ['call', 'start', 2],
        ['call', 'error', 2, 'bad'],
        ['call', 'asyncEnd', 2, undefined],
        ['run', 'asyncEnd', result, 2],
      ])
    } finally {
      runs.unsubscribe(runHandlers)
      calls.unsubscribe(callHandlers)
      calls.start.unbindStore(store)
      await R.fiber.dispose()
    }
    expect(runs.hasSubscribers).toBe(false)
    expect(calls.hasSubscribers).toBe(false)
  })

  it('a misused run() is an error on the run channel', async () => {
    const R = await load(IsolateCodeRuntime)
    const errors = []
    const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd() {}, error: (m) => errors.push(m.error.message) }
    runs.subscribe(handlers)
    try {
      await expect(R.runtime.run({ program: 'return 1', bindings: 5 })).rejects.toThrow()
      expect(errors).toHaveLength(1)
    } finally {
      runs.unsubscribe(handlers)
      await R.fiber.dispose()
    }
  })
})

/** A real SDK's spans: name, ids, parent, attributes, status. */
function recorder() {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const tracer = provider.getTracer('tracing.test')
  const spans = () => exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    id: s.spanContext().spanId,
    parent: s.parentSpanContext?.spanId,
    attributes: s.attributes,
    status: s.status,
  }))
  return { tracer, spans }
}

const SPAN_CASES = [
  ['typescript', IsolateCodeRuntime, 'process'],
  ['typescript', IsolateCodeRuntime, 'thread'],
  ['python', PythonCodeRuntime, undefined],
  ['typescript', IsolatePtcRuntime, 'process'],
  ['python', PythonPtcRuntime, undefined],
]

describe.each(SPAN_CASES)('OpenTelemetry spans: %s, %o %s', (language, Class, containment) => {
  const L = LANGUAGES[language]
  const ptc = Class === IsolatePtcRuntime || Class === PythonPtcRuntime
  const run = (R, request) => (ptc ? R.runtime.run(R.runtime.resolve(request)) : R.runtime.run(request))

  it("a run's span under the caller's, a call's under the run's, the host tool's under the call's", async () => {
    const { tracer, spans } = recorder()
    const R = await load(Class, { tracer, ...(containment && { containment }) })
    try {
      const bindings = tools({
        a: ({ i }) => tracer.startActiveSpan('host tool', (span) => {
          span.end()
          return i + 1
        }),
      })
      const result = await tracer.startActiveSpan('agent step', async (outer) => {
        try {
          return await run(R, { program: L.one, bindings })
        } finally {
          outer.end()
        }
      })
      expect(result).toStrictEqual({ logs: [], value: 8 })
      const [host, call, runSpan, outer] = spans()
      expect([host.name, call.name, runSpan.name, outer.name]).toStrictEqual(['host tool', 'execute_tool tools.a', 'code-runtime-native.run', 'agent step'])
      expect(host.parent).toBe(call.id)
      expect(call.parent).toBe(runSpan.id)
      expect(runSpan.parent).toBe(outer.id)
      // Arguments and results are not recorded unless configured.
      expect(call.attributes).toStrictEqual({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'tools.a',
        'gen_ai.tool.call.id': '1',
        'gen_ai.tool.type': 'function',
        'code_runtime.call.outcome': 'resolved',
      })
      expect(runSpan.attributes['code_runtime.language']).toBe(language)
      expect(runSpan.attributes['code_runtime.call_count']).toBe(1)
      expect(runSpan.attributes['code_runtime.wall_ms']).toBeGreaterThan(0)
      expect(runSpan.attributes['error.type']).toBeUndefined()
      expect(runSpan.status.code).toBe(0)
    } finally {
      await R.fiber.dispose()
    }
  })

  it('a failed run, a rejected call and an abandoned one; with traceContent, what they carried', async () => {
    const { tracer, spans } = recorder()
    const R = await load(Class, { tracer, traceContent: true, ...(containment && { containment }) })
    try {
      const result = await run(R, {
        program: `${L.rejectAndLeave.replace(/return 1$/, '')}${language === 'python' ? 'raise ValueError("late")' : 'throw new Error("late")'}`,
        bindings: tools({ boom: () => { throw new TypeError('no such thing') }, slow: () => new Promise(() => {}) }),
      })
      expect(result.error.kind).toBe('exception')
      const [boom, slow, runSpan] = spans()
      expect(boom.name).toBe('execute_tool tools.boom')
      expect(boom.attributes['code_runtime.call.outcome']).toBe('rejected')
      expect(boom.attributes['error.type']).toBe('TypeError')
      expect(boom.attributes['gen_ai.tool.call.arguments']).toBe('{}')
      expect(boom.status).toStrictEqual({ code: 2, message: 'no such thing' })
      expect(slow.name).toBe('execute_tool tools.slow')
      expect(slow.attributes['code_runtime.call.outcome']).toBe('abandoned')
      expect(slow.attributes['gen_ai.tool.call.arguments']).toBe('{"left":true}')
      expect(slow.status.code).toBe(0)
      expect(runSpan.attributes['error.type']).toBe('exception')
      expect(runSpan.status.code).toBe(2)
      expect(runSpan.status.message).toBe(result.error.message)
      expect(runSpan.attributes['code_runtime.call_count']).toBe(2)
    } finally {
      await R.fiber.dispose()
    }
  })
})

describe.each(['process', 'thread'])('OpenTelemetry: where a TypeScript run stopped (%s)', (containment) => {
  it("is on the run's span in the conventions' code.* names", async () => {
    const { tracer, spans } = recorder()
    const R = await load(IsolateCodeRuntime, { tracer, containment, computeMs: 200 })
    try {
      const result = await R.runtime.run({ program: 'function score() {\n  for (;;) {}\n}\nscore()', bindings: [] })
      expect(result.error.kind).toBe('timeout')
      expect(R.runtime.lastRunStats().stoppedAt).toStrictEqual({ line: 2, column: 3, functionName: 'score' })
      const [run] = spans()
      expect(run.attributes).toMatchObject({ 'code.line.number': 2, 'code.column.number': 3, 'code.function.name': 'score', 'error.type': 'timeout' })
    } finally {
      await R.fiber.dispose()
    }
  })
})

describe('OpenTelemetry: where a Python run stopped', () => {
  it("is on the run's span too", async () => {
    const { tracer, spans } = recorder()
    const R = await load(PythonCodeRuntime, { tracer, maxWallMs: 300 })
    try {
      const result = await R.runtime.run({ program: 'def score():\n    while True:\n        pass\nscore()', bindings: [] })
      expect(result.error.kind).toBe('timeout')
      const [run] = spans()
      expect(run.attributes).toMatchObject({ 'code.line.number': 2, 'code.column.number': 5, 'code.function.name': 'score', 'error.type': 'timeout' })
    } finally {
      await R.fiber.dispose()
    }
  })
})

describe('a tracer that throws', () => {
  it.each([['typescript', IsolateCodeRuntime], ['python', PythonCodeRuntime]])('%s: loses its spans, never a result', async (language, Class) => {
    let started = 0
    const broken = (where) => ({
      startSpan() {
        started++
        if (where === 'start') throw new Error('startSpan broke')
        return {
          setAttribute() { if (where === 'attribute') throw new Error('setAttribute broke') },
          setAttributes() { if (where === 'attribute') throw new Error('setAttributes broke') },
          setStatus() {},
          end() { if (where === 'end') throw new Error('end broke') },
          spanContext: () => ({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 1 }),
          isRecording: () => true,
        }
      },
    })
    for (const where of ['start', 'attribute', 'end']) {
      const R = await load(Class, { tracer: broken(where), ...(language === 'typescript' && { containment: 'thread' }) })
      try {
        const result = await R.runtime.run({ program: LANGUAGES[language].one, bindings: tools({ a: ({ i }) => i * 2 }) })
        expect(result, where).toStrictEqual({ logs: [], value: 14 })
        expect(R.runtime.lastRunStats().calls.map((c) => c.outcome), where).toStrictEqual(['resolved'])
      } finally {
        await R.fiber.dispose()
      }
    }
    expect(started).toBeGreaterThanOrEqual(4)
  })
})

describe("a context manager that throws around the host's function", () => {
  it.each([['typescript', IsolateCodeRuntime], ['python', PythonCodeRuntime]])('%s: the function runs once, its result is the call\'s', async (language, Class) => {
    // (The SDK's own exporter runs under the broken manager too: the spans themselves are lost.)
    const { tracer } = recorder()
    const original = contextManager.with
    const R = await load(Class, { tracer, ...(language === 'typescript' && { containment: 'thread' }) })
    try {
      for (const when of ['before', 'after']) {
        let calls = 0
        contextManager.with = function (ctx, fn, thisArg, ...args) {
          if (when === 'before') throw new Error('with broke')
          original.call(this, ctx, fn, thisArg, ...args)
          throw new Error('with broke')
        }
        const result = await R.runtime.run({ program: LANGUAGES[language].one, bindings: tools({ a: ({ i }) => (calls++, i * 2) }) })
        contextManager.with = original
        expect(result, when).toStrictEqual({ logs: [], value: 14 })
        expect(calls, when).toBe(1)
        expect(R.runtime.lastRunStats().calls.map((c) => c.outcome), when).toStrictEqual(['resolved'])
      }
    } finally {
      contextManager.with = original
      await R.fiber.dispose()
    }
  })
})

describe('tracing config', () => {
  it.each([
    [IsolateCodeRuntime, { tracer: 5 }, /config\.tracer must be an OpenTelemetry Tracer \(an object with startSpan\), got number/],
    [IsolateCodeRuntime, { tracer: {} }, /config\.tracer must be an OpenTelemetry Tracer \(an object with startSpan\), got object/],
    [PythonCodeRuntime, { tracer: { startSpan: 1 } }, /config\.tracer must be an OpenTelemetry Tracer/],
    [IsolateCodeRuntime, { traceContent: 'yes' }, /config\.traceContent must be true or false, got yes|expected boolean/],
    [PythonCodeRuntime, { traceContent: 1 }, /config\.traceContent must be true or false, got 1|expected boolean/],
  ])('%o %o is refused at load, saying why', async (Class, config, message) => {
    const thread = Class === IsolateCodeRuntime ? { containment: 'thread' } : {}
    await expect(load(Class, { ...thread, ...config })).rejects.toThrow(message)
  })
})
