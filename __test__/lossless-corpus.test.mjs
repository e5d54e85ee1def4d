// Every case of the lossless-JSON corpus (__test__/lossless-corpus.mjs, docs/seam.md#lossless-json)
// through every walker it applies to, with real runtimes: the Rust walker as a TypeScript
// completion and binding argument, lib/lossless.mjs as a binding resolution in both backends, and
// py/protocol.py as a Python completion and binding argument. Arguments and resolutions are
// batched, one run per backend and direction; each completion is a run of its own.
import fs from 'node:fs'
import vm from 'node:vm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PythonCodeRuntime } from '../lib/index.mjs'
import { loadIsolate } from './helpers.mjs'
import { CASES, MESSAGES, withReason } from './lossless-corpus.mjs'
import { TOOLS, load, privateTmpdir } from './python-helpers.mjs'

const TMP = privateTmpdir('lossless-corpus')

const JS = CASES.filter((c) => c.js !== undefined)
const IN_ISOLATE = JS.filter((c) => !c.hostOnly)
const PY = CASES.filter((c) => c.py !== undefined)

/** A fresh host-side value of the case (`vm` in scope for the foreign-realm case). */
const build = (c) => new Function('vm', `return (${c.js})`)(vm)
const q = JSON.stringify // an id as a JavaScript or Python string literal (ids are ASCII)

/** Host functions named by case id: each records what it was sent and answers `answer(c)`. */
function recorder(cases, answer) {
  const received = new Map()
  const functions = {}
  for (const c of cases) {
    functions[c.id] = (arg) => {
      received.set(c.id, [...(received.get(c.id) ?? []), arg])
      return answer(c)
    }
  }
  return { received, functions }
}

/** The program's `[id, ...outcome]` rows by id. */
function byId(result) {
  expect(result.error).toBeUndefined()
  return new Map(result.value.map(([id, ...rest]) => [id, rest]))
}

let ts, tsFiber, py, pyFiber
const tsArgs = recorder(IN_ISOLATE, () => null)
const pyArgs = recorder(PY, () => null)
let tsArgRows, tsResolutionRows, pyArgRows, pyResolutionRows

beforeAll(async () => {
  ;({ runtime: ts, fiber: tsFiber } = await loadIsolate())
  ;({ runtime: py, fiber: pyFiber } = await load(PythonCodeRuntime))
  const resolutions = recorder(JS, build).functions

  tsArgRows = byId(await ts.run({
    program: `const out = []
      for (const [id, make] of [${IN_ISOLATE.map((c) => `[${q(c.id)}, () => (${c.js})]`).join(',\n')}]) {
        try { await tools[id](make()); out.push([id, 'sent']) } catch (e) { out.push([id, e instanceof ToolCallError, e.toolName, e.message]) }
      }
      return out`,
    bindings: [TOOLS(tsArgs.functions)],
  }))
  tsResolutionRows = byId(await ts.run({
    program: `const out = []
      for (const id of [${JS.map((c) => q(c.id)).join(', ')}]) {
        try { out.push([id, 'resolved', await tools[id](0)]) } catch (e) { out.push([id, e instanceof ToolCallError, e.toolName, e.message]) }
      }
      return out`,
    bindings: [TOOLS(resolutions)],
  }))
  pyArgRows = byId(await py.run({
    program: `out = []
for id, make in [${PY.map((c) => `(${q(c.id)}, lambda: (${c.py}))`).join(',\n')}]:
    try:
        await tools[id](make())
        out.append([id, "sent"])
    except ToolCallError as e:
        out.append([id, True, e.toolName, str(e)])
return out`,
    bindings: [TOOLS(pyArgs.functions)],
  }))
  pyResolutionRows = byId(await py.run({
    program: `out = []
for id in [${JS.map((c) => q(c.id)).join(', ')}]:
    try:
        out.append([id, "resolved", await tools[id](0)])
    except ToolCallError as e:
        out.append([id, True, e.toolName, str(e)])
return out`,
    bindings: [TOOLS(resolutions)],
  }))
})

afterAll(async () => {
  await tsFiber?.dispose()
  await pyFiber?.dispose()
  fs.rmSync(TMP, { recursive: true, force: true })
})

/** Whether a -0 is anywhere in `value` (JSON.stringify writes it as 0); iterative, for deep values. */
function hasNegativeZero(value) {
  const stack = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (Object.is(v, -0)) return true
    if (v !== null && typeof v === 'object') stack.push(...Object.values(v))
  }
  return false
}

/** `value` is exactly the case's JSON: its own keys in order, and no -0 passed off as 0. */
function expectJson(value, c, where) {
  expect(JSON.stringify(value), where).toBe(c.json)
  expect(hasNegativeZero(value), where).toBe(false)
}

describe('the corpus', () => {
  it('is well formed', () => {
    const ids = CASES.map((c) => c.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const c of CASES) {
      expect(typeof c.about, c.id).toBe('string')
      expect(c.js !== undefined || c.py !== undefined, c.id).toBe(true)
      expect('json' in c !== 'refused' in c, `${c.id}: json or refused`).toBe(true)
      // A refused Python value needs its reason; a case without one has none.
      if ('refused' in c) expect(typeof c.refused, c.id).toBe(c.py === undefined ? 'object' : 'string')
      if (c.hostOnly) expect(c.py, c.id).toBeUndefined()
    }
  })
})

// Only the walkers a case applies to get a test: nothing is skipped.
for (const c of CASES) describe(c.id, () => {
  const inIsolate = c.js !== undefined && !c.hostOnly

  if (inIsolate) it('src/isolate/lossless.rs: TypeScript completion', async () => {
    const result = await ts.run({ program: `return (${c.js})`, bindings: [] })
    if (c.noTsCompletion) expect(result).toEqual({ logs: [] })
    else if ('json' in c) {
      expect(Object.keys(result)).toEqual(['logs', 'value'])
      expectJson(result.value, c, 'completion')
    } else expect(result).toEqual({ logs: [], error: { kind: 'invalid-output', message: MESSAGES.completion } })
  })

  if (inIsolate) it('src/isolate/lossless.rs: TypeScript binding argument', () => {
    const row = tsArgRows.get(c.id)
    const received = tsArgs.received.get(c.id)
    if ('json' in c) {
      expect(row).toEqual(['sent'])
      expect(received).toHaveLength(1)
      expectJson(received[0], c, 'argument')
    } else {
      expect(row).toEqual([true, c.id, MESSAGES.arguments])
      expect(received).toBeUndefined()
    }
  })

  if (c.js !== undefined) it('lib/lossless.mjs: a resolution into TypeScript and into Python', () => {
    for (const [where, rows] of [['typescript', tsResolutionRows], ['python', pyResolutionRows]]) {
      const row = rows.get(c.id)
      if ('json' in c) {
        expect(row[0], where).toBe('resolved')
        expectJson(row[1], c, where)
      } else expect(row, where).toEqual([true, c.id, MESSAGES.resolution])
    }
  })

  if (c.py !== undefined) it('py/protocol.py: Python completion', async () => {
    const result = await py.run({ program: `return (${c.py})`, bindings: [] })
    if ('json' in c) {
      expect(Object.keys(result)).toEqual(['logs', 'value'])
      expectJson(result.value, c, 'completion')
    } else {
      expect(result).toEqual({ logs: [], error: { kind: 'invalid-output', message: withReason(MESSAGES.completion, c.refused) } })
    }
  })

  if (c.py !== undefined) it('py/protocol.py: Python binding argument', () => {
    const row = pyArgRows.get(c.id)
    const received = pyArgs.received.get(c.id)
    if ('json' in c) {
      expect(row).toEqual(['sent'])
      expect(received).toHaveLength(1)
      expectJson(received[0], c, 'argument')
    } else {
      expect(row).toEqual([true, c.id, withReason(MESSAGES.arguments, c.refused)])
      expect(received).toBeUndefined()
    }
  })
})
