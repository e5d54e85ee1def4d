// The bindings bridge turned against the host (issue 9 item 8): arguments amplified through shared
// references, host rejections too large to convert, signals that are not AbortSignals or whose
// getters throw, `functions` members whose getter throws, and deep completions walked past a
// budget. Each case asserts the result and that the host can run `return 1` next.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadIsolate, tools } from './helpers.mjs'

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
