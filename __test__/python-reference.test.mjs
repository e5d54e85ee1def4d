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
/** A runtime with its own config, disposed after the file. */
async function runtimeWith(config) {
  const { runtime, fiber: f } = await load(PythonCodeRuntime, { graceMs: 300, ...config })
  fibers.push(f)
  return runtime
}

describe('diagnostics (§9.8)', () => {
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
    expect(r.error.message).not.toContain('exception chain truncated')
    expect(r.error.message).toContain('ExceptionGroup: level 97 (1 sub-exception)')
  })
})
