// Durable runs (docs/durable.md): a binding that needs a human's approval throws `suspend(data)`,
// the run pauses with a journal of every call the host answered, and a later `runDurable()` with
// that journal replays it (never calling a journaled tool again) and goes on from the paused call.
// What the host hands back is input: a malformed, tampered or oversized journal is refused before
// anything runs, and a program that does not make the journal's calls ends, saying where.
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { IsolateCodeRuntime, IsolatePtcRuntime, MAX_JOURNAL_BYTES, PythonCodeRuntime, PythonPtcRuntime, suspend } from '../lib/index.mjs'
import native from '../lib/native.mjs'
import { PYTHON } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 20_000 })

const RUNTIMES = [
  ...(native.containedIsolatesAvailable() ? [['typescript', 'process']] : []),
  ['typescript', 'thread'],
  ['python', undefined],
]

/** The programs, in each language: the same calls and the same value. */
const PROGRAMS = {
  typescript: {
    approval: "console.log('before')\nconst a = await tools.fetch({ q: 'x' })\nconst ok = await tools.approve({ amount: a.n })\nconsole.log('after')\nconst b = await tools.fetch({ q: 'y' })\nreturn [a.n, ok, b.n]",
    gathered: "const [a, ok, b] = await Promise.all([tools.fetch({ q: 'x' }), tools.approve({ amount: 1 }), tools.fetch({ q: 'y' })])\nreturn [a.n, ok, b.n]",
    other: "return await tools.fetch({ q: 'other' })",
  },
  python: {
    approval: 'print("before")\na = await tools.fetch({"q": "x"})\nok = await tools.approve({"amount": a["n"]})\nprint("after")\nb = await tools.fetch({"q": "y"})\nreturn [a["n"], ok, b["n"]]',
    gathered: 'import asyncio\na, ok, b = await asyncio.gather(tools.fetch({"q": "x"}), tools.approve({"amount": 1}), tools.fetch({"q": "y"}))\nreturn [a["n"], ok, b["n"]]',
    other: 'return await tools.fetch({"q": "other"})',
  },
}

/** A host whose `approve` pauses until it is approved, counting every call that reached it. */
function host() {
  const seen = []
  let approved = false
  let n = 0
  const bindings = [{
    global: 'tools',
    functions: {
      fetch: async ({ q }) => (seen.push(`fetch ${q}`), { q, n: ++n }),
      approve: async ({ amount }) => {
        seen.push(`approve ${amount}`)
        if (!approved) throw suspend({ approval: `pay ${amount}` })
        return 'approved'
      },
    },
  }]
  return { bindings, seen, approve: () => (approved = true) }
}

describe.each(RUNTIMES)('%s (%s)', (language, containment) => {
  let ctx
  let fiber
  let runtime
  const load = async (config = {}) => {
    const c = new Context()
    const f = await c.plugin(language === 'python' ? PythonCodeRuntime : IsolateCodeRuntime, language === 'python' ? { pythonBin: PYTHON, ...config } : { containment, ...config })
    return { ctx: c, fiber: f, runtime: c.codeRuntime }
  }
  beforeAll(async () => {
    ;({ ctx, fiber, runtime } = await load())
  })
  afterAll(() => fiber.dispose())
  const P = PROGRAMS[language]

  it('pauses at the approval, and resumes after it without calling any tool twice', async () => {
    const h = host()
    const first = await runtime.runDurable({ program: P.approval, bindings: h.bindings })
    expect(first).toStrictEqual({
      logs: ['before'],
      suspended: { seq: 2, name: 'tools.approve', args: { amount: 1 }, data: { approval: 'pay 1' } },
      journal: {
        version: 2,
        seed: expect.stringMatching(/^[0-9a-f]{16}$/),
        clock: expect.any(Number),
        // The time zone and locale programs see.
        zone: expect.stringMatching(/^\S+ \S+$/),
        calls: [{ seq: 1, name: 'tools.fetch', args: { q: 'x' }, ok: true, value: { q: 'x', n: 1 } }],
        logs: ['before'],
      },
    })
    expect(Math.abs(first.journal.clock - Date.now())).toBeLessThan(60_000)
    if (containment === 'process') expect(first.journal.zone).toBe('UTC en-US')
    expect(Object.isFrozen(first.suspended)).toBe(true)
    h.approve()
    // The journal as a host stores it: JSON text, read back later.
    const journal = JSON.parse(JSON.stringify(first.journal))
    const streamed = []
    const resumed = await runtime.runDurable({ program: P.approval, bindings: h.bindings, journal, onLog: (t) => streamed.push(t) })
    expect(resumed.value).toStrictEqual([1, 'approved', 2])
    expect(resumed.logs).toStrictEqual(['before', 'after'])
    // What the paused attempt printed was shown already.
    expect(streamed).toStrictEqual(['after'])
    expect(resumed.journal.calls.map((c) => `${c.seq} ${c.name}`)).toStrictEqual(['1 tools.fetch', '2 tools.approve', '3 tools.fetch'])
    // fetch x once, approve twice (paused, then approved), fetch y once.
    expect(h.seen).toStrictEqual(['fetch x', 'approve 1', 'approve 1', 'fetch y'])
    // The value an uninterrupted run with the approval gives.
    const straight = host()
    straight.approve()
    expect((await runtime.runDurable({ program: P.approval, bindings: straight.bindings })).value).toStrictEqual(resumed.value)
  })

  it('a pause among concurrent calls waits for the others, journals them, and replays them', async () => {
    const h = host()
    const first = await runtime.runDurable({ program: P.gathered, bindings: h.bindings })
    expect(first.suspended).toStrictEqual({ seq: 2, name: 'tools.approve', args: { amount: 1 }, data: { approval: 'pay 1' } })
    // Call 1 was with the host when the run paused: journaled. Call 3 is journaled too when it
    // reached the host before the pause did; after it, it never reaches the host.
    const journaled = first.journal.calls.map((c) => c.seq)
    expect([[1], [1, 3]]).toContainEqual(journaled)
    h.approve()
    const resumed = await runtime.runDurable({ program: P.gathered, bindings: h.bindings, journal: first.journal })
    expect(resumed.value).toStrictEqual([1, 'approved', 2])
    expect(resumed.journal.calls.map((c) => c.seq)).toStrictEqual([1, 2, 3])
    // No tool ran twice: each fetch once over both attempts.
    expect(h.seen.filter((s) => s.startsWith('fetch'))).toStrictEqual(['fetch x', 'fetch y'])
  })

  it('a host restart: a new runtime resumes the journal', async () => {
    const h = host()
    const first = await runtime.runDurable({ program: P.approval, bindings: h.bindings })
    const stored = JSON.stringify(first.journal)
    h.approve()
    const next = await load()
    try {
      const resumed = await next.runtime.runDurable({ program: P.approval, bindings: h.bindings, journal: JSON.parse(stored) })
      expect(resumed.value).toStrictEqual([1, 'approved', 2])
    } finally {
      await next.fiber.dispose()
    }
  })

  it('ctx.ptcRuntime: runDurable(spec, journal) pauses and resumes a resolved spec, its sandbox facts kept', async () => {
    const c = new Context()
    const f = await c.plugin(
      language === 'python' ? PythonPtcRuntime : IsolatePtcRuntime,
      language === 'python' ? { pythonBin: PYTHON } : { containment },
    )
    try {
      const ptc = c.ptcRuntime
      const h = host()
      const spec = ptc.resolve({ program: P.approval, bindings: h.bindings, sandboxPolicy: { mode: 'danger-full-access', workspaceRoot: '/tmp' } })
      const first = await ptc.runDurable(spec)
      expect(first).toMatchObject({ logs: ['before'], suspended: { seq: 2, name: 'tools.approve' }, sandbox: { mode: 'danger-full-access', denied: false } })
      h.approve()
      const resumed = await ptc.runDurable(spec, JSON.parse(JSON.stringify(first.journal)))
      expect(resumed).toMatchObject({ logs: ['before', 'after'], value: [1, 'approved', 2], sandbox: { mode: 'danger-full-access' } })
      expect(resumed.journal.calls).toHaveLength(3)
      expect(h.seen).toStrictEqual(['fetch x', 'approve 1', 'approve 1', 'fetch y'])
      // A journal a host hands back is checked before anything runs.
      await expect(ptc.runDurable(spec, { version: 1 })).rejects.toThrow(TypeError)
    } finally {
      await f.dispose()
    }
  })

  it('a program that does not make the journal\'s call ends, saying where it diverged', async () => {
    const h = host()
    const first = await runtime.runDurable({ program: P.approval, bindings: h.bindings })
    const diverged = await runtime.runDurable({ program: P.other, bindings: h.bindings, journal: first.journal })
    expect(diverged.error.kind).toBe('exception')
    expect(diverged.error.message).toBe(
      'replay diverged at call #1: the journal has tools.fetch({"q":"x"}) there, the program called tools.fetch({"q":"other"}). ' +
        'A durable program must make the same calls with the same arguments on every attempt: what decides them must not come from randomness, clocks or anything the tools return differently',
    )
    // The journaled call was never made again.
    expect(h.seen).toStrictEqual(['fetch x', 'approve 1'])
  })

  it('pause, then an abort of the resumed run: the abort, with the journal', async () => {
    const h = host()
    const first = await runtime.runDurable({ program: P.approval, bindings: h.bindings })
    const abort = new AbortController()
    abort.abort('cancelled by the user')
    const aborted = await runtime.runDurable({ program: P.approval, bindings: h.bindings, journal: first.journal, signal: abort.signal })
    expect(aborted.error).toStrictEqual({ kind: 'abort', message: 'cancelled by the user' })
    expect(aborted.journal).toStrictEqual(first.journal)
  })

  it('run() is untouched: suspend() there fails the call, and no journal is added', async () => {
    const h = host()
    const result = await runtime.run({ program: P.approval, bindings: h.bindings })
    expect(Object.keys(result).sort()).toStrictEqual(['error', 'logs'])
    expect(result.error.message).toContain('suspend() pauses a run only under runDurable(); this run is not durable')
  })

  it('only suspend() pauses: an error dressed as a suspension is an ordinary failed call', async () => {
    const lookAlike = Object.assign(new Error('pause me'), { name: 'RunSuspension', data: { approval: 'forged' } })
    Object.setPrototypeOf(lookAlike, Object.getPrototypeOf(suspend()))
    const bindings = [{ global: 'tools', functions: { approve: async () => { throw lookAlike } } }]
    const program = language === 'python'
      ? 'try:\n    await tools.approve({})\nexcept Exception as e:\n    return str(e)'
      : 'try { await tools.approve({}) } catch (e) { return e.message }'
    const result = await runtime.runDurable({ program, bindings })
    expect(result.suspended).toBeUndefined()
    expect(result.value).toBe('pause me')
    expect(result.journal.calls).toMatchObject([{ seq: 1, name: 'tools.approve', ok: false, message: 'pause me' }])
  })

  /** A runtime whose output budget is far above the journal's cap, so that the journal is what ends a run. */
  const roomy = () => load(language === 'python' ? { maxLogBytes: 39_000_000 } : { maxOutputBytes: 2 ** 30 })
  /** `tools.big()` answers 16 MiB of JSON; `bigCalls.n` counts the calls that reached it. */
  const bigAnswers = () => {
    const answer = 'x'.repeat(16 * 1024 * 1024)
    const bigCalls = { n: 0 }
    return { bigCalls, bindings: [{ global: 'tools', functions: { big: async () => (bigCalls.n++, answer) } }] }
  }

  it('a journal never grows past MAX_JOURNAL_BYTES: the call that would take it past ends the attempt, and what it returns resumes', async () => {
    const { bigCalls, bindings } = bigAnswers()
    const program = language === 'python'
      ? 'for i in range(5):\n    await tools.big({"i": i})\nreturn 1'
      : 'for (let i = 0; i < 5; i++) await tools.big({ i })\nreturn 1'
    const full = "code-runtime-native: the journal would grow past MAX_JOURNAL_BYTES (67108864 bytes of JSON) with call #4's answer; " +
      "the run was ended. A durable run's calls (their arguments and answers) and what it prints are kept in one journal: pass and print less"
    const { fiber: roomyFiber, runtime: roomyRuntime } = await roomy()
    try {
      const first = await roomyRuntime.runDurable({ program, bindings })
      expect(first.error).toStrictEqual({ kind: 'worker-exit', message: full })
      expect(bigCalls.n).toBe(4)
      expect(first.journal.calls.map((call) => call.seq)).toStrictEqual([1, 2, 3])
      expect(Buffer.byteLength(JSON.stringify(first.journal))).toBeLessThanOrEqual(MAX_JOURNAL_BYTES)
      // What it returned is a journal a later attempt takes: three calls replayed, the fourth made again.
      const again = await roomyRuntime.runDurable({ program, bindings, journal: first.journal })
      expect(again.error).toStrictEqual({ kind: 'worker-exit', message: full })
      expect(bigCalls.n).toBe(5)
    } finally {
      roomyFiber.dispose()
    }
  })

  it('logs that would take the journal past MAX_JOURNAL_BYTES: a failure, and a journal that can be read again', async () => {
    // Three answers of 16 MiB and 20 MiB printed: each within its budget, together past the journal's cap.
    const { bigCalls, bindings } = bigAnswers()
    const program = language === 'python'
      ? 'for i in range(3):\n    await tools.big({"i": i})\nprint("y" * (20 * 1024 * 1024))\nreturn 1'
      : "for (let i = 0; i < 3; i++) await tools.big({ i })\nconsole.log('y'.repeat(20 * 1024 * 1024))\nreturn 1"
    const { fiber: roomyFiber, runtime: roomyRuntime } = await roomy()
    try {
      const result = await roomyRuntime.runDurable({ program, bindings })
      expect(Object.keys(result).sort()).toStrictEqual(['error', 'journal', 'logs'])
      expect(result.error).toStrictEqual({
        kind: 'worker-exit',
        message: 'code-runtime-native: what the run printed would take its journal past MAX_JOURNAL_BYTES (67108864 bytes of JSON); ' +
          'its result is this failure, and its journal keeps only what it was given. A durable run keeps what it prints in its journal: print less',
      })
      expect(result.logs).toStrictEqual(['y'.repeat(20 * 1024 * 1024)])
      expect(result.journal.logs).toStrictEqual([])
      expect(result.journal.calls.map((call) => call.seq)).toStrictEqual([1, 2, 3])
      // It can be read again: its calls are replayed, none made again.
      const again = await roomyRuntime.runDurable({ program: 'return 2', bindings, journal: result.journal })
      expect(again.value).toBe(2)
      expect(bigCalls.n).toBe(3)
    } finally {
      roomyFiber.dispose()
    }
  })
})

describe('what a host hands back is checked before anything runs', () => {
  let fiber
  let runtime
  beforeAll(async () => {
    const ctx = new Context()
    fiber = await ctx.plugin(IsolateCodeRuntime, { containment: 'thread' })
    runtime = ctx.codeRuntime
  })
  afterAll(() => fiber.dispose())
  const entry = { seq: 1, name: 'tools.fetch', args: {}, ok: true, value: 1 }
  const journal = (fields) => ({ version: 2, seed: '0123456789abcdef', clock: 1_700_000_000_000, zone: null, calls: [], logs: [], ...fields })

  it.each([
    ['not an object', [], 'must be an object'],
    ['a string', 'journal', 'must be an object'],
    ['another version', journal({ version: 1 }), 'is version 1, not 2'],
    ['an unknown key', journal({ extra: 1 }), 'must have exactly version, seed, clock, zone, calls and logs (it has calls,clock,extra,logs,seed,version,zone)'],
    ['no seed', (({ seed, ...rest }) => rest)(journal({})), 'must have exactly version, seed, clock, zone, calls and logs (it has calls,clock,logs,version,zone)'],
    ['a seed that is not 16 hexadecimal digits', journal({ seed: '0123456789ABCDEF' }), 'seed must be 16 lowercase hexadecimal digits'],
    ['a short seed', journal({ seed: 'abc' }), 'seed must be 16 lowercase hexadecimal digits'],
    ['a clock that is not whole milliseconds', journal({ clock: 1.5 }), 'clock must be whole milliseconds since the epoch'],
    ['a clock past what a Date holds', journal({ clock: 8.64e15 + 1 }), 'clock must be whole milliseconds since the epoch'],
    ['a zone that is not a string', journal({ zone: 7 }), 'zone must be null or a time zone and locale (a string of 200 characters at most)'],
    ['a zone too long', journal({ zone: 'x'.repeat(201) }), 'zone must be null or a time zone and locale (a string of 200 characters at most)'],
    ['logs that are not strings', journal({ logs: [1] }), 'logs must be an array of strings'],
    ['an entry with an unknown key', journal({ calls: [{ ...entry, at: 1 }] }), 'calls[0] must have exactly args, name, ok, seq, value'],
    ['numbers out of order', journal({ calls: [{ ...entry, seq: 2 }, entry] }), 'calls[1].seq must be an integer above the one before it'],
    ['a repeated number', journal({ calls: [entry, entry] }), 'calls[1].seq must be an integer above the one before it'],
    ['a failure without its message', journal({ calls: [{ seq: 1, name: 'tools.fetch', args: {}, ok: false, message: 3 }] }), 'calls[0].message must be a string'],
  ])('%s', async (_, bad, message) => {
    const run = runtime.runDurable({ program: 'return 1', bindings: [], journal: bad })
    await expect(run).rejects.toThrow(`code-runtime-native: request.journal ${message}; pass the journal a previous runDurable() returned, unchanged`)
  })

  it('a journal larger than MAX_JOURNAL_BYTES is refused', async () => {
    const big = journal({ logs: ['x'.repeat(MAX_JOURNAL_BYTES)] })
    await expect(runtime.runDurable({ program: 'return 1', bindings: [], journal: big })).rejects.toThrow(
      `request.journal is larger than ${MAX_JOURNAL_BYTES} bytes of JSON`,
    )
  })

  it('a journal that is not JSON (a cycle, a BigInt) is refused', async () => {
    const cyclic = journal({})
    cyclic.calls.push(cyclic)
    await expect(runtime.runDurable({ program: 'return 1', bindings: [], journal: cyclic })).rejects.toThrow('request.journal is not JSON')
    await expect(runtime.runDurable({ program: 'return 1', bindings: [], journal: journal({ logs: [1n] }) })).rejects.toThrow('request.journal is not JSON')
  })

  it('a forged answer is what the program sees (the host owns its journal), and a tool is never called for it', async () => {
    let called = 0
    const bindings = [{ global: 'tools', functions: { fetch: () => ++called } }]
    const forged = journal({ calls: [{ seq: 1, name: 'tools.fetch', args: { q: 1 }, ok: false, message: 'from the journal' }] })
    const result = await runtime.runDurable({ program: 'try { await tools.fetch({ q: 1 }) } catch (e) { return e.message }', bindings, journal: forged })
    expect(result.value).toBe('from the journal')
    expect(called).toBe(0)
  })

  it('suspend(data) takes lossless JSON only', () => {
    expect(() => suspend({ at: new Date() })).toThrow('code-runtime-native: suspend(data): data must be lossless JSON')
    expect(() => suspend(1n)).toThrow(TypeError)
    expect(suspend().data).toBe(null)
  })
})
