// Abort wins (docs/sandbox.md#host-safety): once a run's signal has fired, no binding settlement reaches
// the program, whatever order the host settles the pending call in within that tick. The host's
// Code Mode aborts the run's signal and rejects the pending tool call ("run_code run is over …")
// in the same tick; before this was enforced, `containment: 'process'` told the model about the
// rejection in about one cancel in seven. Each isolate tier plays the race 500 times (Python 200),
// in every order the host can produce it, and every run must end `abort` with the signal's
// reason. The same holds for dispose.
import fs from 'node:fs'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IsolateCodeRuntime, PythonCodeRuntime } from '../lib/index.mjs'
import { PYTHON, privateTmpdir } from './python-helpers.mjs'

/** 500 per isolate tier; a Python run's child is torn down after each abort, so it plays fewer. */
const REPETITIONS = { process: 500, thread: 500, python: 200 }
const REASON = 'user cancelled'
const ABORTED = { logs: [], error: { kind: 'abort', message: REASON } }

const RUNTIMES = {
  process: { Class: IsolateCodeRuntime, config: { containment: 'process' }, program: 'await tools.search({ q: 1 }); return 2' },
  thread: { Class: IsolateCodeRuntime, config: { containment: 'thread' }, program: 'await tools.search({ q: 1 }); return 2' },
  python: { Class: PythonCodeRuntime, config: { pythonBin: PYTHON }, program: "await tools.search({'q': 1})\nreturn 2" },
}

/**
 * The orders a host settles the pending call in, relative to the abort, within one tick. `settle`
 * is the host's resolve or reject of the call the program awaits.
 */
const ORDERS = [
  // The host's abort listener was added before the run's own and rejects the call.
  (signal, abort, settle) => (signal.addEventListener('abort', () => settle.reject(over(signal))), abort),
  // ... added after the run's own.
  (signal, abort, settle) => () => (signal.addEventListener('abort', () => settle.reject(over(signal))), abort()),
  // The host rejects the call first, then aborts.
  (signal, abort, settle) => () => (settle.reject(over(signal)), abort()),
  // The host aborts, then rejects the call in a microtask of the same tick.
  (signal, abort, settle) => () => (abort(), queueMicrotask(() => settle.reject(over(signal)))),
  // The host's listener resolves the call instead.
  (signal, abort, settle) => (signal.addEventListener('abort', () => settle.resolve({ hits: [] })), abort),
]

function over(signal) {
  return new Error(`run_code run is over (${String(signal.reason)}); search tool call abandoned`)
}

/** One race; resolves with the run's result. */
async function race(runtime, program, order) {
  const controller = new AbortController()
  const settle = {}
  let called
  const waiting = new Promise((resolve) => (called = resolve))
  const search = () =>
    new Promise((resolve, reject) => {
      Object.assign(settle, { resolve, reject })
      called()
    })
  // Orders that listen before the run is started do so now.
  const play = order(controller.signal, () => controller.abort(REASON), settle)
  const result = runtime.run({
    program,
    bindings: [{ global: 'tools', functions: { search }, errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' } }],
    signal: controller.signal,
  })
  await waiting
  play()
  return result
}

/** Counts of each distinct result. */
function tally(results) {
  const counts = new Map()
  for (const r of results) {
    const key = JSON.stringify(r)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return Object.fromEntries(counts)
}

let tmp
beforeAll(() => {
  tmp = privateTmpdir('abort-race')
})
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

describe.each(Object.keys(RUNTIMES))('%s', (name) => {
  const { Class, config, program } = RUNTIMES[name]
  let fiber
  let runtime

  beforeAll(async () => {
    const ctx = new Context()
    fiber = await ctx.plugin(Class, config)
    runtime = ctx.get('codeRuntime')
    if (name !== 'python') expect(runtime.containment).toBe(name)
  })

  afterAll(async () => {
    await fiber?.dispose()
  })

  it(`the host's cancel race, ${REPETITIONS[name]} times in every order: every run ends abort with the signal's reason`, async () => {
    const results = []
    for (let i = 0; i < REPETITIONS[name]; i++) results.push(await race(runtime, program, ORDERS[i % ORDERS.length]))
    expect(tally(results)).toEqual({ [JSON.stringify(ABORTED)]: REPETITIONS[name] })
  }, 180_000)

  it('dispose with the pending call settled in the same tick, before or after it: runtime disposed', async () => {
    const results = []
    for (let i = 0; i < 20; i++) {
      const c = new Context()
      const fiber = await c.plugin(Class, config)
      const rt = c.get('codeRuntime')
      const settle = {}
      let called
      const waiting = new Promise((resolve) => (called = resolve))
      const search = () => new Promise((resolve, reject) => (Object.assign(settle, { resolve, reject }), called()))
      const result = rt.run({ program, bindings: [{ global: 'tools', functions: { search } }] })
      await waiting
      if (i % 2 === 0) settle.reject(new Error('host shutting down'))
      const disposed = fiber.dispose()
      if (i % 2 === 1) settle.resolve({ hits: [] })
      results.push(await result)
      await disposed
    }
    expect(tally(results)).toEqual({ [JSON.stringify({ logs: [], error: { kind: 'abort', message: 'runtime disposed' } })]: 20 })
  }, 120_000)
})
