// A durable run sees the same world on every attempt (docs/durable.md#determinism):
// randomness from the journal's seed, a virtual clock that starts at the journal's and moves per
// answer and per timer, answers in call order, timers in due order, and what has no replayable
// order refused. The proof is replay equivalence: random programs (concurrent calls, timers,
// randomness, dates, approvals anywhere) paused at every approval and resumed from the journal end
// with exactly the value an uninterrupted run with the same approvals has, each tool called once.
import { setTimeout as sleep } from 'node:timers/promises'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { IsolateCodeRuntime, PythonCodeRuntime, suspend } from '../lib/index.mjs'
import native from '../lib/native.mjs'
import { PYTHON } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 20_000 })

const TIERS = [...(native.containedIsolatesAvailable() ? ['process'] : []), 'thread']

/** A journal with nothing in it yet: what a first attempt with this seed and clock is given. */
const fresh = (seed = '00000000deadbeef', clock = 1_700_000_000_000) => ({ version: 2, seed, clock, zone: null, calls: [], logs: [] })

/** A small seeded generator for the tests' own choices (not the runtime's). */
function generator(seed) {
  let s = seed >>> 0
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n)
  }
}

/**
 * Tools whose real delays vary (answers come back out of call order), and approvals that pause the
 * run until granted (`granted`: the ids, or `'all'`).
 */
function tools(granted = new Set(), delays = generator(7)) {
  const seen = []
  const bindings = [{
    global: 'tools',
    functions: {
      fetch: async (x) => {
        seen.push(`fetch ${JSON.stringify(x)}`)
        await sleep(delays(6))
        return { x, half: typeof x === 'number' ? x / 2 : null }
      },
      approve: async (id) => {
        seen.push(`approve ${id}`)
        if (granted !== 'all' && !granted.has(id)) throw suspend({ id })
        return `granted ${id}`
      },
      slow: async () => {
        await sleep(80)
        return 'slow'
      },
    },
  }]
  return { bindings, seen, granted }
}

/** Runs `program` durably, granting each approval it pauses at, until it ends. */
async function toTheEnd(runtime, program, journal) {
  const h = tools(new Set())
  let result = await runtime.runDurable({ program, bindings: h.bindings, journal })
  let attempts = 1
  while (result.suspended !== undefined) {
    expect(attempts).toBeLessThan(50)
    h.granted.add(result.suspended.data.id)
    // The journal as a host keeps it: JSON text.
    const stored = JSON.parse(JSON.stringify(result.journal))
    result = await runtime.runDurable({ program, bindings: h.bindings, journal: stored })
    attempts++
  }
  return { result, attempts, seen: h.seen }
}

/** The same program with every approval granted from the start: one attempt. */
async function uninterrupted(runtime, program, journal) {
  const h = tools('all', generator(99))
  const result = await runtime.runDurable({ program, bindings: h.bindings, journal })
  expect(result.suspended).toBeUndefined()
  return { result, seen: h.seen }
}

/** Every source a program could read, as one value. */
const READ_ALL =
  '[Math.random(), crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint8Array(12))), Date.now(), new Date().toISOString(), Date(), performance.now(), ' +
  "new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'medium' }).format(), " +
  "new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', second: 'numeric' }).formatToParts()[0].value]"

describe.each(TIERS)('TypeScript (%s)', (containment) => {
  let fiber
  let runtime
  beforeAll(async () => {
    const ctx = new Context()
    fiber = await ctx.plugin(IsolateCodeRuntime, { containment })
    runtime = ctx.codeRuntime
  })
  afterAll(() => fiber.dispose())

  it('every attempt reads the same randomness and clock, before and after a pause', async () => {
    const program = `const before = ${READ_ALL}\nawait tools.approve(String(before[0]))\nconst after = ${READ_ALL}\nreturn { before, after }`
    const paused = await toTheEnd(runtime, program, fresh())
    expect(paused.attempts).toBe(2)
    const straight = await uninterrupted(runtime, program, fresh())
    expect(paused.result.value).toStrictEqual(straight.result.value)
    const { before, after } = paused.result.value
    // The clock starts at the journal's; the approval's answer moved it one millisecond.
    expect(before.slice(3)).toStrictEqual([
      1_700_000_000_000, '2023-11-14T22:13:20.000Z', expect.stringMatching(/^Tue Nov 14 2023 /), 0, '11/14/23, 10:13:20 PM', '20',
    ])
    expect(after.slice(3, 5)).toStrictEqual([1_700_000_000_001, '2023-11-14T22:13:20.001Z'])
    expect(after[6]).toBe(1)
    // Random, not constant: the two reads differ, and another seed draws other numbers.
    expect(after[0]).not.toBe(before[0])
    expect(after[1]).not.toBe(before[1])
    expect(before[1]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const other = await uninterrupted(runtime, program, fresh('00000000deadbeee'))
    expect(other.result.value.before[0]).not.toBe(before[0])
    expect(other.result.value.before[3]).toBe(before[3])
  })

  it('a first attempt without a journal takes a new seed and the present as its clock', async () => {
    const program = `const r = ${READ_ALL}\nawait tools.approve('a')\nreturn r`
    const h = tools(new Set())
    const first = await runtime.runDurable({ program, bindings: h.bindings })
    expect(Math.abs(first.journal.clock - Date.now())).toBeLessThan(60_000)
    h.granted.add('a')
    const resumed = await runtime.runDurable({ program, bindings: h.bindings, journal: first.journal })
    expect(resumed.value[3]).toBe(first.journal.clock)
    const again = await runtime.runDurable({ program, bindings: tools('all').bindings })
    expect(again.journal.seed).not.toBe(first.journal.seed)
    expect(again.value[0]).not.toBe(resumed.value[0])
  })

  it('the clock: one millisecond per answer, a timer\'s delay when it fires, never real time', async () => {
    const program = [
      'const t = [Date.now(), performance.now()]',
      'await tools.fetch(1)',
      't.push(Date.now())',
      'for (let i = 0; i < 2e6; i++);',
      't.push(Date.now())',
      'await new Promise((r) => setTimeout(r, 250))',
      't.push(Date.now(), performance.now())',
      'await Promise.all([tools.fetch(2), tools.fetch(3)])',
      't.push(performance.now())',
      'return t',
    ].join('\n')
    const { result } = await uninterrupted(runtime, program, fresh())
    const c = 1_700_000_000_000
    expect(result.value).toStrictEqual([c, 0, c + 1, c + 1, c + 251, 251, 253])
  })

  it('answers reach the program in call order and timers in due order, however the tools are timed', async () => {
    const program = [
      'const order = []',
      'setTimeout(() => order.push("t5"), 5); setTimeout(() => order.push("t2"), 2); setTimeout(() => order.push("t2b"), 2)',
      'await Promise.all([1, 2, 3, 4, 5, 6].map(async (i) => { const r = await tools.fetch(i); order.push(`f${r.x}`) }))',
      'await new Promise((r) => setTimeout(r, 10))',
      'return order',
    ].join('\n')
    const seen = new Set()
    for (let i = 0; i < 5; i++) {
      const { result } = await uninterrupted(runtime, program, fresh())
      seen.add(JSON.stringify(result.value))
    }
    // Six answers move the clock six milliseconds: both 2 ms timers fire after the second answer.
    expect([...seen]).toStrictEqual([JSON.stringify(['f1', 'f2', 't2', 't2b', 'f3', 'f4', 'f5', 't5', 'f6'])])
  })

  it('a timer never overtakes a call in flight: time moves only by answers', async () => {
    const program = 'return await Promise.race([tools.slow(0), new Promise((r) => setTimeout(() => r("timer"), 5))])'
    const { result } = await uninterrupted(runtime, program, fresh())
    expect(result.value).toBe('slow')
    // run() keeps real time: there the timer wins.
    expect((await runtime.run({ program, bindings: tools('all').bindings })).value).toBe('timer')
  })

  it('WeakRef, FinalizationRegistry and Atomics.waitAsync are refused, saying why; run() keeps them', async () => {
    const program = `const out = []
for (const make of [() => new WeakRef({}), () => new FinalizationRegistry(() => {}), () => Atomics.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)]) {
  try { make(); out.push('made') } catch (e) { out.push(e.constructor.name + ': ' + e.message) }
}
return out`
    const { result } = await uninterrupted(runtime, program, fresh())
    const refused = (name, why) =>
      `TypeError: ${name} is not available in a durable run (runDurable): ${why}, which a resumed attempt could not replay`
    expect(result.value).toStrictEqual([
      refused('WeakRef', 'when the collector clears it depends on memory'),
      refused('FinalizationRegistry', 'when the collector calls it depends on memory'),
      refused('Atomics.waitAsync', 'its timeout runs in real time'),
    ])
    expect((await runtime.run({ program, bindings: [] })).value).toStrictEqual(['made', 'made', 'made'])
  })

  it('Date stays the class programs know', async () => {
    const program = `class Stamp extends Date {}
const s = new Stamp()
return [new Date() instanceof Date, s instanceof Date, s instanceof Stamp, s.getTime(), new Date(0).getTime(), new Date(2020, 0, 2).getUTCDate(),
  Date.length, Date.name, Date.prototype.constructor === Date, typeof Date(), Date.UTC(2000, 0), Date.parse('2000-01-01T00:00:00Z'),
  Object.prototype.toString.call(new Date()), String(new Date(NaN))]`
    const { result } = await uninterrupted(runtime, program, fresh())
    expect(result.value).toStrictEqual([
      true, true, true, 1_700_000_000_000, 0, 2, 7, 'Date', true, 'string', 946_684_800_000, 946_684_800_000, '[object Date]', 'Invalid Date',
    ])
  })

  it('a node:vm context the program makes reads the same clock and randomness', async () => {
    const program = "const vm = await import('node:vm')\nreturn [vm.runInNewContext('Date.now()'), vm.runInNewContext('Math.random()'), vm.runInNewContext('typeof WeakRef === \"function\" && (() => { try { new WeakRef({}); return \"made\" } catch (e) { return e.message.slice(0, 7) } })()')]"
    const a = await uninterrupted(runtime, program, fresh())
    const b = await uninterrupted(runtime, program, fresh())
    expect(a.result.value).toStrictEqual(b.result.value)
    expect(a.result.value[0]).toBe(1_700_000_000_000)
    expect(a.result.value[2]).toBe('WeakRef')
  })

  it('run() is untouched: real randomness and real time', async () => {
    const program = 'return [Math.random(), Date.now()]'
    const [a, b] = [await runtime.run({ program, bindings: [] }), await runtime.run({ program, bindings: [] })]
    expect(a.value[0]).not.toBe(b.value[0])
    expect(Math.abs(a.value[1] - Date.now())).toBeLessThan(60_000)
  })

  it('a journal written where programs saw another time zone or locale is refused before anything runs', async () => {
    const h = tools('all')
    const elsewhere = { ...fresh(), zone: 'Pacific/Chatham mi-NZ' }
    const run = runtime.runDurable({ program: 'return await tools.fetch(1)', bindings: h.bindings, journal: elsewhere })
    await expect(run).rejects.toThrow(
      /^code-runtime-native: request\.journal was written where programs saw the time zone and locale "Pacific\/Chatham mi-NZ"; this runtime's programs see "\S+ \S+"\. Resume it on a runtime whose programs see the same/,
    )
    expect(h.seen).toStrictEqual([])
  })

  it('replay equivalence over 24 random programs', () => replayEquivalence(runtime, randomProgram, 24, 0x1000))
})

/**
 * Replay equivalence: `count` random programs (`make(seed)`), each paused at every approval and
 * resumed from the journal as a host stores it, end exactly as an uninterrupted run with the same
 * seed and clock, each tool called once over all the attempts.
 */
async function replayEquivalence(runtime, make, count, base) {
  let pauses = 0
  for (let n = 0; n < count; n++) {
    const program = make(base + n)
    const journal = fresh((base + n).toString(16).padStart(16, '0'), 1_700_000_000_000 + n * 1000)
    const paused = await toTheEnd(runtime, program, journal)
    pauses += paused.attempts - 1
    const straight = await uninterrupted(runtime, program, journal)
    const context = `program ${n}:\n${program}`
    expect(paused.result.error, context).toBeUndefined()
    expect(paused.result.value, context).toStrictEqual(straight.result.value)
    expect(paused.result.logs, context).toStrictEqual(straight.result.logs)
    const fetches = (seen) => seen.filter((s) => s.startsWith('fetch')).sort()
    expect(fetches(paused.seen), context).toStrictEqual(fetches(straight.seen))
  }
  // The programs paused, most of them more than once.
  expect(pauses).toBeGreaterThan(count)
}

/**
 * A random program: nested `Promise.all`s of blocks that fetch (with arguments drawn from
 * randomness and the clock), wait on timers, start timers that record later, print, and ask for
 * approvals. Its value is everything it saw, in the order it saw it.
 */
function randomProgram(seed) {
  const pick = generator(seed)
  let approvals = 0
  let timers = 0
  const arg = () => ['Math.floor(Math.random() * 1000)', 'Date.now() % 1000', 'Math.round(performance.now())', `${pick(50)}`][pick(4)]
  const block = (depth, indent) => {
    const lines = []
    const count = 1 + pick(4)
    for (let i = 0; i < count; i++) {
      const kind = pick(depth > 1 ? 5 : 6)
      if (kind === 0) lines.push(`seen.push((await tools.fetch(${arg()})).half)`)
      else if (kind === 1) lines.push(`await new Promise((r) => setTimeout(r, ${pick(20)}))`)
      else if (kind === 2) lines.push(`{ const k = ${timers++}; setTimeout(() => seen.push('timer ' + k + ' at ' + performance.now()), ${pick(30)}) }`)
      else if (kind === 3) lines.push(`seen.push(await tools.approve('a${approvals++}'), Date.now())`)
      else if (kind === 4) lines.push(`console.log('at', performance.now(), crypto.randomUUID().slice(0, 8))`)
      else {
        const branches = 2 + pick(3)
        const inner = Array.from({ length: branches }, () => `(async () => {\n${block(depth + 1, `${indent}  `)}\n${indent}})()`)
        lines.push(`seen.push(...(await Promise.all([${inner.join(', ')}])).filter((x) => x !== undefined))`)
      }
    }
    return lines.map((l) => `${indent}${l}`).join('\n')
  }
  return `const seen = []\n${block(0, '')}\nawait new Promise((r) => setTimeout(r, 40))\nreturn seen`
}

/** Every source a Python program could read, as one value. */
const PY_READ_ALL =
  '[random.random(), os.urandom(6).hex(), secrets.token_hex(6), str(uuid.uuid4()), random.SystemRandom().random(), time.time(), time.time_ns() // 1000, ' +
  'datetime.datetime.now().isoformat(), datetime.datetime.now(datetime.timezone.utc).isoformat(), str(datetime.date.today()), ' +
  "time.monotonic(), time.perf_counter_ns(), time.strftime('%Y-%m-%d %H:%M:%S'), asyncio.get_running_loop().time()]"
const PY_IMPORTS = 'import asyncio, datetime, os, random, secrets, threading, time, uuid\n'

describe('Python', () => {
  let fiber
  let runtime
  beforeAll(async () => {
    const ctx = new Context()
    fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: PYTHON })
    runtime = ctx.codeRuntime
  })
  afterAll(() => fiber.dispose())

  it('every attempt reads the same randomness and clocks, before and after a pause', async () => {
    const program = `${PY_IMPORTS}before = ${PY_READ_ALL}\nawait tools.approve(str(before[0]))\nafter = ${PY_READ_ALL}\nreturn {"before": before, "after": after}`
    const paused = await toTheEnd(runtime, program, fresh())
    expect(paused.attempts).toBe(2)
    const straight = await uninterrupted(runtime, program, fresh())
    expect(paused.result.value).toStrictEqual(straight.result.value)
    const { before, after } = paused.result.value
    expect(before.slice(5)).toStrictEqual([
      1_700_000_000, 1_700_000_000_000_000, '2023-11-14T22:13:20', '2023-11-14T22:13:20+00:00', '2023-11-14', 0, 0, '2023-11-14 22:13:20', 0,
    ])
    expect(after.slice(5, 8)).toStrictEqual([1_700_000_000.001, 1_700_000_000_001_000, '2023-11-14T22:13:20.001000'])
    expect(after[0]).not.toBe(before[0])
    expect(after[1]).not.toBe(before[1])
    const other = await uninterrupted(runtime, program, fresh('00000000deadbeee'))
    expect(other.result.value.before[0]).not.toBe(before[0])
    expect(other.result.value.before[3]).not.toBe(before[3])
  })

  it('the clocks: one millisecond per answer, a timer\'s delay when it fires, never real time', async () => {
    const program = [
      PY_IMPORTS,
      't = [time.time(), time.monotonic()]',
      'await tools.fetch(1)',
      't.append(time.time())',
      'sum(range(2000000))',
      't.append(time.time())',
      'await asyncio.sleep(0.25)',
      't += [round(time.time() * 1000), round(time.monotonic() * 1000)]',
      'await asyncio.gather(tools.fetch(2), tools.fetch(3))',
      't.append(round(time.monotonic() * 1000))',
      'return t',
    ].join('\n')
    const { result } = await uninterrupted(runtime, program, fresh())
    expect(result.value).toStrictEqual([1_700_000_000, 0, 1_700_000_000.001, 1_700_000_000.001, 1_700_000_000_251, 251, 253])
  })

  it('answers reach the program in call order and timers in due order, however the tools are timed', async () => {
    const program = [
      PY_IMPORTS,
      'order = []',
      'loop = asyncio.get_running_loop()',
      'loop.call_later(0.005, order.append, "t5"); loop.call_later(0.002, order.append, "t2"); loop.call_later(0.002, order.append, "t2b")',
      'async def one(i):',
      '    r = await tools.fetch(i)',
      '    order.append(f"f{r[\'x\']}")',
      'await asyncio.gather(*[one(i) for i in range(1, 7)])',
      'await asyncio.sleep(0.01)',
      'return order',
    ].join('\n')
    const seen = new Set()
    for (let i = 0; i < 5; i++) seen.add(JSON.stringify((await uninterrupted(runtime, program, fresh())).result.value))
    expect([...seen]).toStrictEqual([JSON.stringify(['f1', 'f2', 't2', 't2b', 'f3', 'f4', 'f5', 't5', 'f6'])])
  })

  it('a timer never overtakes a call in flight: time moves only by answers', async () => {
    const program = 'import asyncio\ntry:\n    return await asyncio.wait_for(tools.slow(0), 0.005)\nexcept asyncio.TimeoutError:\n    return "timer"'
    const { result } = await uninterrupted(runtime, program, fresh())
    expect(result.value).toBe('slow')
    expect((await runtime.run({ program, bindings: tools('all').bindings })).value).toBe('timer')
  })

  it('a program that rebinds builtins bends neither the clock nor the randomness: the runner binds its own', async () => {
    const program = [
      PY_IMPORTS,
      'import builtins',
      'def rebound(*args, **kwargs):',
      '    raise RuntimeError("the program rebound this builtin")',
      'builtins.getattr = rebound',
      'builtins.ValueError = None',
      'start = time.monotonic()',
      'await asyncio.sleep(0.25)',
      'try:',
      '    os.urandom(-1)',
      'except BaseException as e:',
      '    refused = [type(e).__name__, str(e)]',
      'return [round((time.monotonic() - start) * 1000), len(os.urandom(5)), refused]',
    ].join('\n')
    const { result } = await uninterrupted(runtime, program, fresh())
    expect(result.value).toStrictEqual([250, 5, ['ValueError', 'negative argument not allowed']])
  })

  it('threads are refused, saying why; run() keeps them', async () => {
    const program = `${PY_IMPORTS}out = []
for start in (lambda: threading.Thread(target=print).start(), lambda: __import__("_thread").start_new_thread(print, ())):
    try:
        start()
        out.append("started")
    except RuntimeError as e:
        out.append(str(e))
try:
    await asyncio.to_thread(print)
    out.append("started")
except RuntimeError as e:
    out.append(str(e))
return out`
    const { result } = await uninterrupted(runtime, program, fresh())
    const refused = 'threads are not available in a durable run (runDurable): how they interleave could not be replayed; use asyncio tasks'
    expect(result.value).toStrictEqual([refused, refused, refused])
    expect((await runtime.run({ program, bindings: [] })).value).toStrictEqual(['started', 'started', 'started'])
  })

  it('run() is untouched: real randomness and real time', async () => {
    const program = 'import random, time\nreturn [random.random(), time.time()]'
    const [a, b] = [await runtime.run({ program, bindings: [] }), await runtime.run({ program, bindings: [] })]
    expect(a.value[0]).not.toBe(b.value[0])
    expect(Math.abs(a.value[1] * 1000 - Date.now())).toBeLessThan(60_000)
  })

  it('string hashes follow the journal\'s seed, on any runtime (a host restart); run() keeps the runtime\'s secret', async () => {
    const program = 'import os, sys\nreturn [str(hash("code-runtime")), list({"a", "b", "c", "d", "e", "f", "g", "h"}), sys.path, os.path.dirname(sys.argv[0]) in sys.path, sys.flags.no_user_site]'
    const first = await uninterrupted(runtime, program, fresh())
    const ctx = new Context()
    const restarted = await ctx.plugin(PythonCodeRuntime, { pythonBin: PYTHON })
    try {
      const again = await uninterrupted(ctx.codeRuntime, program, fresh())
      expect(again.result.value).toStrictEqual(first.result.value)
    } finally {
      await restarted.dispose()
    }
    const other = await uninterrupted(runtime, program, fresh('00000000deadbeee'))
    expect(other.result.value[0]).not.toBe(first.result.value[0])
    // Started without -I, the child is as isolated: the same sys.path, no bootstrap directory, no user site.
    const plain = await runtime.run({ program, bindings: [] })
    expect(first.result.value.slice(2)).toStrictEqual([plain.value[2], false, 1])
    expect(plain.value[0]).not.toBe(first.result.value[0])
  })

  it('replay equivalence over 16 random programs', () => replayEquivalence(runtime, randomPythonProgram, 16, 0x2000))
})

/** `randomProgram`'s Python twin: nested `asyncio.gather`s of blocks, timers, randomness, clocks, approvals. */
function randomPythonProgram(seed) {
  const pick = generator(seed)
  let approvals = 0
  let timers = 0
  let branches = 0
  const arg = () => ['random.randrange(1000)', 'int(time.time() * 1000) % 1000', 'round(time.monotonic() * 1000)', `${pick(50)}`][pick(4)]
  const block = (depth, indent) => {
    const lines = []
    const count = 1 + pick(4)
    for (let i = 0; i < count; i++) {
      const kind = pick(depth > 1 ? 5 : 6)
      if (kind === 0) lines.push(`seen.append((await tools.fetch(${arg()}))["half"])`)
      else if (kind === 1) lines.push(`await asyncio.sleep(${pick(20) / 1000})`)
      else if (kind === 2) lines.push(`asyncio.get_running_loop().call_later(${pick(30) / 1000}, lambda: seen.append(f"timer ${timers++} at {time.monotonic() * 1000:.0f}"))`)
      else if (kind === 3) lines.push(`seen.append(await tools.approve("a${approvals++}")); seen.append(time.time_ns() // 1000)`)
      else if (kind === 4) lines.push('print("at", round(time.perf_counter() * 1000), uuid.uuid4().hex[:8])')
      else {
        const names = Array.from({ length: 2 + pick(3) }, () => `b${branches++}`)
        for (const name of names) lines.push(`async def ${name}():`, ...block(depth + 1, '    ').split('\n'))
        lines.push(`seen.extend(x for x in await asyncio.gather(${names.map((n) => `${n}()`).join(', ')}) if x is not None)`)
      }
    }
    return lines.map((l) => `${indent}${l}`).join('\n')
  }
  return `${PY_IMPORTS}seen = []\n${block(0, '')}\nawait asyncio.sleep(0.04)\nreturn seen`
}
