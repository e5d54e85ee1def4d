// Atomics.waitAsync as the run's own pending work (issue 9 item 9): a waiter V8 settles itself (at
// its timeout, or when Atomics.notify wakes it) settles as in Node instead of ending the run as
// "can never complete"; one that nothing can wake still ends it at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadIsolate } from './helpers.mjs'

let runtime
let fiber
beforeAll(async () => {
  ;({ runtime, fiber } = await loadIsolate())
})
afterAll(() => fiber.dispose())

const run = (program) => runtime.run({ program, bindings: [] })
const SHARED = 'const ia = new Int32Array(new SharedArrayBuffer(16))\n'
const NEVER = { kind: 'exception', message: 'program can never complete: it awaits a promise that nothing can settle' }

describe('Atomics.waitAsync', () => {
  it('a waiter with a timeout times out', async () => {
    expect(await run(`${SHARED}const r = Atomics.waitAsync(ia, 0, 0, 50)\nreturn [r.async, await r.value]`)).toEqual({
      logs: [],
      value: [true, 'timed-out'],
    })
  })

  it('a waiter without a timeout settles when the program notifies it, at once or from a timer', async () => {
    expect(await run(`${SHARED}const p = Atomics.waitAsync(ia, 0, 0).value\nAtomics.notify(ia, 0)\nreturn await p`)).toEqual({ logs: [], value: 'ok' })
    expect(
      await run(`${SHARED}const p = Atomics.waitAsync(ia, 0, 0).value\nsetTimeout(() => Atomics.notify(ia, 0), 30)\nreturn await p`),
    ).toEqual({ logs: [], value: 'ok' })
  })

  it('a notify before the timeout wins, and a value mismatch settles synchronously', async () => {
    expect(await run(`${SHARED}const r = Atomics.waitAsync(ia, 0, 0, 10000)\nAtomics.notify(ia, 0)\nreturn await r.value`)).toEqual({ logs: [], value: 'ok' })
    expect(await run(`${SHARED}return Atomics.waitAsync(ia, 0, 1, 10000)`)).toEqual({ logs: [], value: { async: false, value: 'not-equal' } })
  })

  it('a waiter nothing can wake still ends the run as never settling', async () => {
    expect(await run(`${SHARED}return await Atomics.waitAsync(ia, 0, 0).value`)).toEqual({ logs: [], error: NEVER })
  })

  it('a waiter with a timeout far in the future is still bounded by the wall ceiling', async () => {
    const { runtime: walled, fiber: f } = await loadIsolate({ maxWallMs: 300 })
    const r = await walled.run({ program: `${SHARED}return await Atomics.waitAsync(ia, 0, 0, 1e12).value`, bindings: [] })
    expect(r).toEqual({ logs: [], error: { kind: 'timeout', message: 'wall-clock ceiling reached (300ms)' } })
    await f.dispose()
  })

  it("keeps V8's own shape and errors", async () => {
    expect(
      await run('const d = Object.getOwnPropertyDescriptor(Atomics, "waitAsync")\nreturn [d.enumerable, d.writable, d.configurable, Atomics.waitAsync.name, Atomics.waitAsync.length, String(Atomics.waitAsync)]'),
    ).toEqual({ logs: [], value: [false, true, true, 'waitAsync', 4, 'function waitAsync() { [native code] }'] })
    const r = await run('try { Atomics.waitAsync(new Int32Array(4), 0, 0) } catch (e) { return [e instanceof TypeError, e.message] }')
    expect(r.value[0]).toBe(true)
    expect(r.value[1]).toMatch(/shared/)
  })
})
