// The bindings bridge turned against the host (issue 9 item 8): arguments amplified through shared
// references, host rejections too large to convert, signals that are not AbortSignals or whose
// getters throw, `functions` members whose getter throws, and deep completions walked past a
// budget. Each case asserts the result and that the host can run `return 1` next.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadIsolate, loopTurns, tools } from './helpers.mjs'

let runtime
let fiber
const unhandled = []
const onUnhandled = (reason) => unhandled.push(reason)

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled)
  ;({ runtime, fiber } = await loadIsolate({ computeMs: 2000 }))
})

afterAll(async () => {
  await fiber.dispose()
  process.off('unhandledRejection', onUnhandled)
  expect(unhandled).toEqual([])
})

/** The host is healthy: a trivial run still works. */
async function expectHealthy() {
  expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({ logs: [], value: 1 })
}

describe('binding arguments', () => {
  it('shared references cannot amplify an argument past the byte cap; the host is never called', async () => {
    const t = tools({ len: async (s) => JSON.stringify(s).length })
    // 600 bytes doubled 20 times: 600 MiB of JSON from a few hundred bytes of heap.
    const program = `
let a = 'x'.repeat(600)
for (let i = 0; i < 20; i++) a = [a, a]
try { await tools.len(a) } catch (e) { return [e instanceof ToolCallError, e.toolName, e.message] }`
    const r = await runtime.run({ program, bindings: [t.namespace] })
    expect(r).toEqual({ logs: [], value: [true, 'len', 'binding arguments exceeded 67108864 bytes'] })
    expect(t.calls.len).toBe(0)
    await expectHealthy()
  })

  it('an argument within the cap still crosses', async () => {
    const t = tools({ len: async (s) => JSON.stringify(s).length })
    const program = "let a = 'x'.repeat(600)\nfor (let i = 0; i < 10; i++) a = [a, a]\nreturn await tools.len(a)"
    const r = await runtime.run({ program, bindings: [t.namespace] })
    expect(r.value).toBeGreaterThan(600 * 1024)
  })
})

describe('host rejections', () => {
  it('a rejection whose message is too large to stringify reaches the program as a typed error', async () => {
    // One code unit short of V8's string limit: JSON.stringify of it (quotes added) throws.
    const huge = 'y'.repeat(2 ** 29 - 25)
    const t = tools({ big: async () => Promise.reject(new Error(huge)) })
    const program = 'try { await tools.big({}) } catch (e) { return [e instanceof ToolCallError, e.message.length] }'
    const r = await runtime.run({ program, bindings: [t.namespace] })
    expect(r).toEqual({ logs: [], value: [true, 67108864] })
    await expectHealthy()
  })

  it('a functions member whose getter throws fails that call with the getter error', async () => {
    const functions = {}
    Object.defineProperty(functions, 'trap', {
      enumerable: true,
      get() {
        throw new Error('getter says no')
      },
    })
    const ns = { global: 'tools', functions, errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' } }
    const program = 'try { await tools.trap({}) } catch (e) { return [e instanceof ToolCallError, e.toolName, e.message] }'
    const r = await runtime.run({ program, bindings: [ns] })
    expect(r).toEqual({ logs: [], value: [true, 'trap', 'getter says no'] })
    await expectHealthy()
  })
})

describe('signals', () => {
  it('an AbortSignal whose reason getter throws ends a live run as abort with the fallback message', async () => {
    const controller = new AbortController()
    Object.defineProperty(controller.signal, 'reason', {
      get() {
        throw new Error('no reason for you')
      },
    })
    const pending = runtime.run({ program: 'for (;;) {}', bindings: [], signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    expect(await pending).toEqual({ logs: [], error: { kind: 'abort', message: '<unrenderable rejection value>' } })
    await expectHealthy()
  })

  it('a pre-aborted signal whose getters throw resolves as abort without an isolate', async () => {
    const signal = {
      get aborted() {
        throw new Error('nope')
      },
    }
    expect(await runtime.run({ program: 'return 1', bindings: [], signal })).toEqual({
      logs: [],
      error: { kind: 'abort', message: '<unrenderable rejection value>' },
    })
    const reasonThrows = {
      aborted: true,
      get reason() {
        throw new Error('nope')
      },
    }
    expect(await runtime.run({ program: 'return 1', bindings: [], signal: reasonThrows })).toEqual({
      logs: [],
      error: { kind: 'abort', message: '<unrenderable rejection value>' },
    })
  })

  it('a signal that is not an AbortSignal cannot be listened to and never fires', async () => {
    const signals = [{ aborted: false }, { aborted: false, addEventListener: 1 }, Object.create(null)]
    for (const signal of signals) {
      expect(await runtime.run({ program: 'return 2', bindings: [], signal })).toEqual({ logs: [], value: 2 })
    }
    await expectHealthy()
  })
})

describe('completions', () => {
  it('a 300 000-deep object is walked in linear time and returned whole', async () => {
    const program = 'let v = null\nfor (let i = 0; i < 300000; i++) v = { a: v }\nreturn v'
    const r = await runtime.run({ program, bindings: [] })
    let depth = 0
    for (let v = r.value; v !== null; v = v.a) depth += 1
    expect(depth).toBe(300000)
    // The walk is program work on the isolate's thread, well inside the 2000 ms budget.
    expect(runtime.lastRunStats().cpuMs).toBeLessThan(2000)
  })
})

describe("the host's event loop", () => {
  // In the process tier Node's main thread reads a run's channel and waits briefly for the next
  // call after answering one; a program calling as fast as it can must still leave the loop
  // its turns (timers, I/O, other runs).
  it('keeps its turns while a program calls a binding that answers at once, as fast as it can', async () => {
    const t = tools({ noop: async () => null })
    const turns = loopTurns()
    const program = 'const end = Date.now() + 400\nlet n = 0\nwhile (Date.now() < end) { await tools.noop({}); n++ }\nreturn n > 0'
    const r = await runtime.run({ program, bindings: [t.namespace] })
    const ticks = turns.stop()
    expect(r).toEqual({ logs: [], value: true })
    // 400 ms of back-to-back calls; a loop starved by them would have run the timer a few
    // times at most. Each turn may be late by up to the main thread's service bound (2 ms).
    expect(ticks).toBeGreaterThanOrEqual(20)
    await expectHealthy()
  })

  it('runs a binding that itself starts a run and awaits it, from inside the call', async () => {
    const t = tools({ inner: async (n) => (await runtime.run({ program: `return ${Number(n)} * 2`, bindings: [] })).value })
    const program = 'let sum = 0\nfor (let i = 1; i <= 5; i++) sum += await tools.inner(i)\nreturn sum'
    expect(await runtime.run({ program, bindings: [t.namespace] })).toEqual({ logs: [], value: 30 })
    await expectHealthy()
  })

  it('keeps the order of logs and of calls, and a binding that aborts its own run ends it', async () => {
    const controller = new AbortController()
    const seen = []
    const t = tools({
      note: async (x) => {
        seen.push(`call ${x}`)
        return x
      },
      stop: () => {
        controller.abort('stopped from a binding')
        return new Promise(() => {})
      },
    })
    const program = "console.log('a'); await tools.note(1); console.log('b'); await tools.note(2); await tools.stop({}); return 'unreached'"
    const r = await runtime.run({ program, bindings: [t.namespace], signal: controller.signal, onLog: (text) => seen.push(`log ${text}`) })
    expect(r).toEqual({ logs: ['a', 'b'], error: { kind: 'abort', message: 'stopped from a binding' } })
    // Entries stream in order, calls arrive in order (how the two interleave is not promised:
    // the thread tier batches entries).
    expect(seen.filter((s) => s.startsWith('log'))).toEqual(['log a', 'log b'])
    expect(seen.filter((s) => s.startsWith('call'))).toEqual(['call 1', 'call 2'])
    await expectHealthy()
  })
})
