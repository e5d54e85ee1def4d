// PythonCodeRuntime against the behaviours of the reference Python suite that a user of the
// reference would hit (issue 10, item 4): diagnostics that cannot be rendered, oversized reasons,
// deep exception groups, near-limit values and log writes under a tight RLIMIT_AS, and bursts of
// binding calls. Every case runs a real interpreter.
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { PythonCodeRuntime } from '../lib/index.mjs'
import { TOOLS, liveProcesses, load, privateTmpdir, stagingDirs, unreapedChildren } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 20_000 })
const TMP = privateTmpdir('py-reference')
const MARKER = (n) => `[code-runtime-native] log capture truncated at ${n} bytes`
const TRUNCATED = '\u2026 [truncated]'

let R
let fiber
const fibers = []
beforeAll(async () => {
  ;({ runtime: R, fiber } = await load(PythonCodeRuntime, { graceMs: 300 }))
})
afterAll(async () => {
  await fiber.dispose()
  for (const f of fibers) await f.dispose()
  expect(liveProcesses(TMP)).toEqual([])
  expect(unreapedChildren()).toEqual([])
  expect(stagingDirs(TMP)).toEqual([])
  fs.rmSync(TMP, { recursive: true, force: true })
})

const run = (program, bindings = [], extra = {}) => R.run({ program, bindings, ...extra })
/** ExceptionGroup is a builtin from CPython 3.11 (CRN_TEST_PYTHON may name a 3.10). */
const hasExceptionGroup = () => {
  const [, major, minor] = R.interpreter.version.split(' ').map(Number)
  return major > 3 || (major === 3 && minor >= 11)
}
/** A runtime with its own config, disposed after the file. */
async function runtimeWith(config) {
  const { runtime, fiber: f } = await load(PythonCodeRuntime, { graceMs: 300, ...config })
  fibers.push(f)
  return runtime
}

// docs/python.md#exceptions
describe('diagnostics', () => {
  it('a class whose __module__ and __name__ both raise renders as <unknown>', async () => {
    const program = `
class Meta(type):
    @property
    def __module__(cls):
        raise RuntimeError("no module")

    @property
    def __name__(cls):
        raise RuntimeError("no name")

class Odd(Exception, metaclass=Meta):
    pass

raise Odd("boom")`
    expect(await run(program)).toEqual({ logs: [], error: { kind: 'exception', message: '<unknown>: <diagnostic rendering failed>' } })
  })

  it('a class whose __name__ alone is readable keeps its name', async () => {
    const program = `
class Meta(type):
    @property
    def __module__(cls):
        raise RuntimeError("no module")

class Odd(Exception, metaclass=Meta):
    pass

raise Odd("boom")`
    expect(await run(program)).toEqual({ logs: [], error: { kind: 'exception', message: 'Odd: <diagnostic rendering failed>' } })
  })

  it('a 70 MiB type name in an invalid completion is capped to maxValueBytes, not a frame overflow', async () => {
    const r = await run("return type('N' * (70 * 1024 * 1024), (), {})()")
    const head = 'program completion must be lossless JSON (unsupported type ('
    // The message is ASCII up to the suffix: exactly the budget less the 15-byte suffix, then it.
    expect(r).toEqual({ logs: [], error: { kind: 'invalid-output', message: head + 'N'.repeat(32768 - 15 - head.length) + TRUNCATED } })
    expect(Buffer.byteLength(r.error.message)).toBe(32768)
  })

  it('the same reason under a small budget', async () => {
    const runtime = await runtimeWith({ maxValueBytes: 100 })
    const r = await runtime.run({ program: "return {'k': type('M' * (1 << 20), (), {})()}", bindings: [] })
    const head = 'program completion must be lossless JSON (unsupported type ('
    expect(r).toEqual({ logs: [], error: { kind: 'invalid-output', message: head + 'M'.repeat(100 - 15 - head.length) + TRUNCATED } })
  })

  for (const [shape, program] of [
    ['built', 'e = ValueError("leaf")\nfor i in range(150):\n    e = ExceptionGroup(f"level {i}", [e])\nraise e'],
    [
      'raised',
      'def nest(n):\n    if n == 0:\n        raise ValueError("leaf")\n    try:\n        nest(n - 1)\n    except Exception as exc:\n        raise ExceptionGroup(f"level {n}", [exc])\nnest(150)',
    ],
  ]) {
    it(`a 150-deep ExceptionGroup nesting (${shape}) is cut at 100 links`, async () => {
      const r = await run(program)
      expect(r.error.kind).toBe('exception')
      if (!hasExceptionGroup()) return expect(r.error.message).toMatch(/NameError: name 'ExceptionGroup' is not defined$/)
      expect(r.error.message.startsWith('[code-runtime-native] exception chain truncated at 100 links\n')).toBe(true)
      expect(r.error.message.split('exception chain truncated').length).toBe(2)
      expect(r.error.message).toContain('ExceptionGroup: level ')
      expect(r.error.message).not.toContain('/runner.py')
      expect(Buffer.byteLength(r.error.message)).toBeLessThanOrEqual(32768)
    })
  }

  it('a 99-deep nesting is not cut', async () => {
    const r = await run('e = ValueError("leaf")\nfor i in range(98):\n    e = ExceptionGroup(f"level {i}", [e])\nraise e')
    expect(r.error.kind).toBe('exception')
    if (!hasExceptionGroup()) return expect(r.error.message).toMatch(/NameError: name 'ExceptionGroup' is not defined$/)
    expect(r.error.message).not.toContain('exception chain truncated')
    expect(r.error.message).toContain('ExceptionGroup: level 97 (1 sub-exception)')
  })
})

// docs/python.md#completion, docs/budgets-and-ledger.md#value-budget
describe('near-limit values under a tight RLIMIT_AS', () => {
  it('a 40 MiB string of NULs against maxValueBytes 1024 at 384 MiB is output-limit', async () => {
    const runtime = await runtimeWith({ maxValueBytes: 1024, addressSpaceMb: 384 })
    const r = await runtime.run({ program: 'return "\\x00" * (40 * 1024 * 1024)', bindings: [] })
    expect(r).toEqual({ logs: [], error: { kind: 'output-limit', message: 'completion value exceeded 1024 bytes' } })
  })

  it('a 6 000 000-element list returns, and crosses to a binding, with maxValueBytes 20 MiB at 384 MiB', async () => {
    const runtime = await runtimeWith({ maxValueBytes: 20 << 20, addressSpaceMb: 384 })
    const r = await runtime.run({ program: 'return [0] * 6_000_000', bindings: [] })
    expect(r.error).toBeUndefined()
    expect(r.value.length).toBe(6_000_000)
    expect(r.value.every((x) => x === 0)).toBe(true)
    const seen = []
    const functions = { count: async (xs) => (seen.push(xs.every((x) => x === 0)), xs.length) }
    const program = 'xs = [0] * 6_000_000\nreturn await tools.count(xs)'
    expect(await runtime.run({ program, bindings: [TOOLS(functions)] })).toEqual({ logs: [], value: 6_000_000 })
    expect(seen).toEqual([true])
  })

  for (const [mib, space] of [
    [150, 384],
    [340, 400],
  ]) {
    // Each string is built in one allocation, so the program itself has room for it.
    for (const [shape, write, logs] of [
      ['alone', `sys.stdout.write("x" * (${mib} << 20))`, []],
      ['after a pending fragment', `sys.stdout.write("a")\nsys.stdout.write("x" * (${mib} << 20))`, []],
      ['after a short line', `sys.stdout.write("y\\n".ljust(${mib} << 20, "x"))`, ['y']],
    ]) {
      it(`a single ${mib} MiB sys.stdout.write (${shape}) with maxLogBytes 256 at ${space} MiB returns, the log truncated`, async () => {
        const runtime = await runtimeWith({ maxLogBytes: 256, addressSpaceMb: space })
        const r = await runtime.run({ program: `import sys\n${write}\nreturn "after"`, bindings: [] })
        expect(r).toEqual({ logs: [...logs, MARKER(256)], value: 'after' })
      })
    }
  }

  it('the same flood in lines keeps what fits and ends with the marker', async () => {
    const runtime = await runtimeWith({ maxLogBytes: 256, addressSpaceMb: 400 })
    const program = 'import sys\nsys.stdout.write("line\\n" * (40 << 20))\nreturn "after"'
    const r = await runtime.run({ program, bindings: [] })
    expect(r.value).toBe('after')
    expect(r.logs.at(-1)).toBe(MARKER(256))
    expect(r.logs.slice(0, -1).every((l) => l === 'line')).toBe(true)
    expect(Buffer.byteLength(JSON.stringify(r.logs.slice(0, -1)))).toBeLessThanOrEqual(256)
  })
})

// docs/protocol.md#caps
describe('bursts of binding calls', () => {
  it('5 000 forged calls to an instant binding while not reading replies: the reply queue, not the call backlog', async () => {
    let calls = 0
    const functions = { now: async () => (calls++, 'r') }
    const program = `
import asyncio, os
asyncio.get_running_loop().remove_reader(3)
frames = b"".join(b'{"type":"call","id":%d,"global":"tools","name":"now","args":null}\\n' % i for i in range(5000))
view = memoryview(frames)
while view:
    view = view[os.write(3, view):]
await asyncio.sleep(10)`
    const started = Date.now()
    expect(await run(program, [TOOLS(functions)])).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'reply queue exceeded 1024 pending frames on fd 3 (the child stopped consuming its replies)' },
    })
    expect(calls).toBeGreaterThan(1024)
    expect(Date.now() - started).toBeLessThan(9000)
  })

  it('asyncio.gather of 5 000 instant binding calls succeeds', async () => {
    const functions = { now: async (x) => x }
    const program = 'import asyncio\nrs = await asyncio.gather(*(tools.now(i) for i in range(5000)))\nreturn [len(rs), sum(rs), rs[:3]]'
    expect(await run(program, [TOOLS(functions)])).toEqual({ logs: [], value: [5000, 12_497_500, [0, 1, 2]] })
  })

  it('128 instant calls made at once from the program, then a return, complete (maxPendingCalls)', async () => {
    const functions = { now: async (x) => x }
    const program = 'import asyncio\nfs = [asyncio.ensure_future(tools.now(i)) for i in range(128)]\nawait asyncio.sleep(0)\nreturn "ok"'
    expect(await run(program, [TOOLS(functions)])).toEqual({ logs: [], value: 'ok' })
  })

  it('still: 129 calls that never settle are the pending-calls cap', async () => {
    const never = { never: () => new Promise(() => {}) }
    const program = 'import asyncio\nfor i in range(129):\n    asyncio.ensure_future(tools.never(i))\nawait asyncio.sleep(10)'
    const started = Date.now()
    expect(await run(program, [TOOLS(never)])).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'more than 128 binding calls were pending at once (maxPendingCalls): await calls before making more' },
    })
    expect(Date.now() - started).toBeLessThan(9000)
  })
})
