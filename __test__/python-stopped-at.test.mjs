// Where a Python run stopped (`stats.stoppedAt`, docs/tracing.md#where-a-run-stopped): when the
// host ends a run (its wall ceiling, a ptc deadline, an abort) while the program's code runs, the
// child's SIGTERM handler says where in one `stopped` frame before it dies. What a program could
// try: forge `stopped` frames before its end, answer SIGTERM itself (twice, malformed, or not at
// all), or rebind the builtins and `signal` the handler uses.
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { PythonCodeRuntime, PythonPtcRuntime } from '../lib/index.mjs'
import { PYTHON, TOOLS, load, privateTmpdir, stagingDirs, unreapedChildren } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 20_000 })
const TMP = privateTmpdir('py-stopped')
const WALL = 400
const tools = [TOOLS({ wait: () => new Promise(() => {}) })]

let R
let fiber
beforeAll(async () => {
  ;({ runtime: R, fiber } = await load(PythonCodeRuntime, { maxWallMs: WALL, graceMs: 300 }))
})
afterAll(async () => {
  await fiber.dispose()
  expect(unreapedChildren()).toEqual([])
  expect(stagingDirs(TMP)).toEqual([])
  fs.rmSync(TMP, { recursive: true, force: true })
})

/** Runs `program`; returns its failure and where it stopped (frozen when there). */
const stop = async (program, request = {}, runtime = R) => {
  const result = await runtime.run({ program, bindings: tools, ...request })
  const stats = runtime.lastRunStats()
  if (stats.stoppedAt !== undefined) expect(Object.isFrozen(stats.stoppedAt)).toBe(true)
  return { error: result.error, at: stats.stoppedAt }
}
/** The wall ceiling's failure, with the clause a stop `at` adds (docs/tracing.md#the-timeouts-clause). */
const ceiling = (at) => {
  const where = at === undefined ? '' : ` at <model>:${at.line}:${at.column}`
  const name = at?.functionName === undefined ? '' : at.functionName.startsWith('<') ? ` in ${at.functionName}` : ` in ${at.functionName}()`
  return { kind: 'timeout', message: `wall-clock ceiling reached (${WALL}ms)${where}${name}` }
}
const DEF_SPIN = 'def spin():\n    while True:\n        pass\n'

it.each([
  ['a loop at the top level', 'x = 0\nwhile True:\n    x += 1', { line: 2, column: 1 }],
  ['a loop in a named function', 'def score(n):\n    while True:\n        n += 1\nscore(1)', { line: 2, column: 5, functionName: 'score' }],
  // Columns count characters: `é` is two bytes in the line the compiler counts.
  ['a blocking C call, after a non-ASCII name', 'import time\ndef nap():\n    é = 1; time.sleep(60)\nnap()', { line: 3, column: 12, functionName: 'nap' }],
  ['a method, deep in recursion', 'class A:\n    def r(self, n):\n        if n == 0:\n            while True: pass\n        return self.r(n - 1)\nA().r(500)', { line: 4, column: 13, functionName: 'r' }],
  ['a generator a builtin drives', 'total = sum(1 for _ in iter(int, 1))', { line: 1, column: 12, functionName: '<genexpr>' }],
  ['code after the program awaited', 'import asyncio\nawait asyncio.sleep(0)\nwhile True:\n    pass', { line: 3, column: 1 }],
])('the wall ceiling in %s: the program frame it was in', async (_, program, at) => {
  const { error, at: stopped } = await stop(program)
  expect(error).toEqual(ceiling(at))
  expect(stopped).toStrictEqual(at)
})

it('an abort while the program computes: the result unchanged, the location in the stats', async () => {
  const abort = new AbortController()
  setTimeout(() => abort.abort('enough'), 150)
  const result = await R.run({ program: `${DEF_SPIN}spin()`, bindings: tools, signal: abort.signal })
  expect(result).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'enough' } })
  expect(R.lastRunStats().stoppedAt).toStrictEqual({ line: 2, column: 5, functionName: 'spin' })
})

it('the ptc seam: a deadline reports where, and the result keeps its exact shape', async () => {
  const { fiber: ptcFiber, ctx } = await load(PythonPtcRuntime, { timeoutMs: 300, graceMs: 300 })
  try {
    const ptc = ctx.ptcRuntime
    const result = await ptc.run(ptc.resolve({ program: `print("a")\n${DEF_SPIN}spin()`, bindings: [] }))
    expect(result).toStrictEqual({ logs: ['a'], error: { kind: 'timeout', message: 'execution deadline reached (300ms) at <model>:3:5 in spin()' } })
    expect(ptc.lastRunStats().stoppedAt).toStrictEqual({ line: 3, column: 5, functionName: 'spin' })
  } finally {
    await ptcFiber.dispose()
  }
})

describe('the CPU budget', () => {
  let cpu
  let cpuFiber
  beforeAll(async () => {
    ;({ fiber: cpuFiber, runtime: cpu } = await load(PythonCodeRuntime, { cpuSeconds: 1, maxWallMs: 10_000 }))
  })
  afterAll(() => cpuFiber.dispose())
  const spent = { kind: 'timeout', message: 'CPU time exhausted (limit at most the configured 1s; a stricter inherited RLIMIT_CPU can fire sooner)' }

  it("the child's timer, just before the kernel's limit, says where", async () => {
    const { error, at } = await stop(`${DEF_SPIN}spin()`, {}, cpu)
    expect(error).toEqual({ kind: 'timeout', message: `${spent.message} at <model>:2:5 in spin()` })
    expect(at).toStrictEqual({ line: 2, column: 5, functionName: 'spin' })
    expect(cpu.lastRunStats().cpuMs).toBeGreaterThan(900)
  })

  it.each([
    // C code that never returns to the interpreter: the kernel's SIGXCPU ends it first.
    ['a C loop', 'sum(range(10**13))'],
    // A program may disarm the timer: the kernel's limit still holds.
    ['a disarmed timer', `import signal\nsignal.setitimer(signal.ITIMER_PROF, 0)\n${DEF_SPIN}spin()`],
  ])('%s: still a timeout, with no location', async (_, program) => {
    const { error, at } = await stop(program, {}, cpu)
    expect(error).toEqual(spent)
    expect(at).toBeUndefined()
  })
})

it('a CPU budget past what a timer can hold leaves the kernel\'s limit alone, and runs', async () => {
  const { fiber: huge, runtime } = await load(PythonCodeRuntime, { cpuSeconds: 9007199254740990 })
  try {
    expect(await runtime.run({ program: 'return 1', bindings: [] })).toStrictEqual({ logs: [], value: 1 })
  } finally {
    await huge.dispose()
  }
})

it('no location when nothing of the program ran, or the run ended another way', async () => {
  for (const [program, ended] of [
    ['await tools.wait({})', 'timeout'], // awaiting a binding: stats.calls shows it in flight
    ['import asyncio\nawait asyncio.sleep(60)', 'timeout'],
    ['return 1', 'value'],
    ["raise ValueError('x')", 'exception'],
  ]) {
    const { error, at } = await stop(program)
    expect(error?.kind ?? 'value', program).toBe(ended)
    expect(at, program).toBeUndefined()
    expect(Object.keys(R.lastRunStats()), program).not.toContain('stoppedAt')
  }
})

describe('what a program can do to it', () => {
  const forge = (fields) => `import os\nos.write(3, (${JSON.stringify(JSON.stringify({ type: 'stopped', ...fields }))} + "\\n").encode())\n`

  it('`stopped` frames written before the end are dropped: the handler says where it really was', async () => {
    expect(await R.run({ program: `${forge({ line: 99, column: 9, functionName: 'fake' })}return 1`, bindings: tools })).toStrictEqual({ logs: [], value: 1 })
    expect(R.lastRunStats().stoppedAt).toBeUndefined()
    const { error, at } = await stop(`${forge({ line: 99, column: 9, functionName: 'fake' })}${DEF_SPIN}spin()`)
    expect(at).toStrictEqual({ line: 4, column: 5, functionName: 'spin' })
    expect(error).toEqual(ceiling(at))
  })

  it('rebinding the builtins and `signal` does not reach the handler', async () => {
    const program = [
      'import builtins, signal',
      'for name in ("len", "getattr", "enumerate", "isinstance", "str", "int"):',
      '    setattr(builtins, name, None)',
      'signal.signal = None',
      'def spin():',
      '    while True:',
      '        pass',
      'spin()',
    ].join('\n')
    const { error, at } = await stop(program)
    expect(at).toStrictEqual({ line: 6, column: 5, functionName: 'spin' })
    expect(error).toEqual(ceiling(at))
  })

  it('a program answering SIGTERM itself: the first well-formed frame after the end, or none', async () => {
    const handler = (body) => `import os, signal\ndef h(*_):\n${body}    os._exit(0)\nsignal.signal(signal.SIGTERM, h)\nwhile True:\n    pass`
    const write = (fields) => `    os.write(3, (${JSON.stringify(JSON.stringify({ type: 'stopped', ...fields }))} + "\\n").encode())\n`
    // It describes its own run: taken at its word, the first one only.
    let { error, at } = await stop(handler(write({ line: 7, column: 3 }) + write({ line: 8, column: 1 })))
    expect(at).toStrictEqual({ line: 7, column: 3 })
    expect(error).toEqual(ceiling(at))
    for (const bad of [{ line: 0, column: 1 }, { line: '7', column: 1 }, { line: 7, column: 1.5 }, { line: 7, column: 1, functionName: 3 }, { line: 7 }]) {
      ;({ error, at } = await stop(handler(write(bad))))
      expect(error, JSON.stringify(bad)).toEqual(ceiling())
      expect(at, JSON.stringify(bad)).toBeUndefined()
    }
    // Ignoring SIGTERM: killed after the grace, with no location.
    ;({ error, at } = await stop('import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass'))
    expect(error).toEqual(ceiling())
    expect(at).toBeUndefined()
  })

  it('a name as long as a frame may hold is cut to 200 characters', async () => {
    const name = `f${'n'.repeat(5000)}`
    const { at } = await stop(`def ${name}():\n    while True:\n        pass\n${name}()`)
    expect(at).toStrictEqual({ line: 2, column: 5, functionName: name.slice(0, 200) })
  })
})
