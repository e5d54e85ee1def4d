// A subverted sandbox process read the way every real run is: on Node's main thread, by the
// JavaScript runtime. isolate-process-forged.test.mjs drives forged processes through a harness
// whose supervisor reads the channel itself; here the runtime's own pool is made of forged ones
// (`forgeIsolatePool`, in place of `new IsolatePool`), so each run goes through
// `startContainedIsolateRun`, the main thread's reader (which delivers a healthy `done` itself,
// src/process_tier/host/supervise/main_read.rs), the session and the seam. What the process sends
// must be re-checked there as on the supervisor: the run ends with the protocol's verdict, the
// binding is never called, output is re-metered, nothing sent after `done` is read or kept, and no
// process outlives the runtime.
import { afterEach, describe, expect, it, vi } from 'vitest'
import native from '../lib/native.mjs'
import { PROTOCOL_BREACHES } from './forged-scenarios.mjs'
import { loadIsolate, tools } from './helpers.mjs'
import { sandboxProcesses } from './process-helpers.mjs'

vi.setConfig({ testTimeout: 60_000 })
const MAX_OUTPUT_BYTES = 4096
const honestPool = native.IsolatePool
afterEach(() => {
  native.IsolatePool = honestPool
})

/** A `'process'` runtime whose sandbox processes play `scenario`, and its counted `tools`. */
async function forgedRuntime(scenario, config = {}) {
  native.IsolatePool = function ForgedPool(options) {
    return native.forgeIsolatePool(scenario, options)
  }
  const loaded = await loadIsolate({ containment: 'process', maxOutputBytes: MAX_OUTPUT_BYTES, ...config })
  native.IsolatePool = honestPool
  return { ...loaded, tools: tools() }
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * One run of a program that would call the binding, were the process honest. It starts once the
 * pool's next process has booted, so the run takes an idle one and Node's main thread reads its
 * channel from the first byte (a process the supervisor waits for is handed to the main thread a
 * moment later, and the supervisor reads until then).
 */
async function run(runtime, t) {
  await pause(250)
  return runtime.run({ program: 'return await tools.echo(5)', bindings: [t.namespace] })
}

async function disposeAndCheck(fiber) {
  await fiber.dispose()
  expect(sandboxProcesses()).toEqual([])
}

const broke = (what) => ({
  logs: [],
  error: { kind: 'worker-exit', message: `isolate process broke the channel protocol (${what}); it was killed` },
})

describe.runIf(native.containedIsolatesAvailable())('a subverted sandbox process, read on the main thread', () => {
  it('the harness is real: an honest pool built the same way runs the program and calls the binding', async () => {
    native.IsolatePool = function HonestPool(options) {
      return new honestPool(options)
    }
    const { runtime, fiber } = await loadIsolate({ containment: 'process', maxOutputBytes: MAX_OUTPUT_BYTES })
    native.IsolatePool = honestPool
    const t = tools()
    expect(await run(runtime, t)).toEqual({ logs: [], value: 5 })
    expect(t.calls.echo).toBe(1)
    await disposeAndCheck(fiber)
  })

  it.each(PROTOCOL_BREACHES)('%s: the run ends with the verdict, the binding is never called, the next run gets a fresh process', async (scenario, what) => {
    const { runtime, fiber, tools: t } = await forgedRuntime(scenario)
    expect(await run(runtime, t)).toEqual(broke(what))
    expect(await run(runtime, t)).toEqual(broke(what))
    expect(t.calls.echo).toBe(0)
    await disposeAndCheck(fiber)
  })

  it('a log flood is re-metered by the host: whole entries in order, within the budget, then output-limit', async () => {
    const { runtime, fiber, tools: t } = await forgedRuntime('log-flood')
    const result = await run(runtime, t)
    expect(result.error).toEqual({ kind: 'output-limit', message: `outer output exceeded ${MAX_OUTPUT_BYTES} bytes` })
    const expected = (i) => `line ${String(i).padStart(3, '0')} ${'y'.repeat(90)}`
    expect(result.logs.length).toBeGreaterThan(0)
    expect(result.logs.length).toBeLessThan(200)
    expect(JSON.stringify(result.logs).length).toBeLessThanOrEqual(MAX_OUTPUT_BYTES)
    result.logs.slice(0, -1).forEach((line, i) => expect(line).toBe(expected(i)))
    expect(expected(result.logs.length - 1).startsWith(result.logs.at(-1))).toBe(true)
    await disposeAndCheck(fiber)
  })

  it('a call after done is never made; the result stands and the process is retired', async () => {
    const { runtime, fiber, tools: t } = await forgedRuntime('frames-after-done', { maxRunsPerProcess: 5 })
    for (let i = 0; i < 3; i++) expect(await run(runtime, t)).toEqual({ logs: [], value: 7 })
    expect(t.calls.echo).toBe(0)
    await disposeAndCheck(fiber)
  })

  it.each([1, 5])(
    'done, then a flood never read (maxRunsPerProcess %i): the result stands, no entry of the flood reaches a run',
    async (maxRunsPerProcess) => {
      const { runtime, fiber, tools: t } = await forgedRuntime('done-then-flood', { maxRunsPerProcess })
      const before = process.memoryUsage().rss
      for (let i = 0; i < 3; i++) {
        // The pause before each run gives the last process time to write what its socket takes:
        // retired after its run (1), or kept idle and then discarded by the pool for having
        // written while idle (5) rather than handed to the next run with the flood in its channel.
        expect(await run(runtime, t)).toEqual({ logs: [], value: 1 })
      }
      expect(t.calls.echo).toBe(0)
      // Each process offers 1 GiB after its result: none of it is held.
      expect(process.memoryUsage().rss - before).toBeLessThan(256 << 20)
      await disposeAndCheck(fiber)
    },
  )

  it.each([
    ['after-stop', ['before']],
    ['call-then-stop', []],
  ])('%s: nothing passes the claimed end, no binding called (docs/budgets-and-ledger.md#nothing-passes-the-end)', async (scenario, logs) => {
    const { runtime, fiber, tools: t } = await forgedRuntime(scenario)
    for (let i = 0; i < 2; i++) {
      expect(await run(runtime, t)).toEqual({
        logs,
        error: { kind: 'worker-exit', message: 'program exited with code 0 before completing' },
      })
    }
    expect(t.calls.echo).toBe(0)
    await disposeAndCheck(fiber)
  })

  it('stop-then-hang: a claimed end, then no done and no CPU, is killed at the grace ceiling with the claimed verdict', async () => {
    const { runtime, fiber, tools: t } = await forgedRuntime('stop-then-hang')
    const started = performance.now()
    expect(await run(runtime, t)).toEqual({
      logs: [],
      error: { kind: 'timeout', message: 'compute budget exhausted (50ms busy)' },
    })
    // A process that has had no CPU since its claim keeps its grace (in CPU) until the ceiling,
    // 500 ms after the claim (src/process_tier/host/supervise/mod.rs, `starved_grace`), and no
    // longer: not the 50 ms of wall time a process still computing gets.
    const elapsed = performance.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(450)
    expect(elapsed).toBeLessThan(5000)
    expect(t.calls.echo).toBe(0)
    await disposeAndCheck(fiber)
  })

  it('a process that exits mid-run: worker-exit with its status, the logs it sent kept', async () => {
    const { runtime, fiber, tools: t } = await forgedRuntime('exit')
    expect(await run(runtime, t)).toEqual({
      logs: ['before the exit'],
      error: { kind: 'worker-exit', message: 'isolate process exited (code=3, signal=null) before completing' },
    })
    await disposeAndCheck(fiber)
  })
})
