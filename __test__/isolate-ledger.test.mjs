// The exact output ledger, end to end (docs/budgets-and-ledger.md#the-output-ledger; onLog:
// docs/seam.md#observers).
import { describe, expect, it } from 'vitest'
import { isNestedNull, ledgerBytes, loadIsolate } from './helpers.mjs'

async function runAt(cap, program, extra = {}) {
  const { runtime, fiber } = await loadIsolate({ maxOutputBytes: cap })
  try {
    return await runtime.run({ program, bindings: [], ...extra })
  } finally {
    await fiber.dispose()
  }
}

const limit = (logs, message) => ({ logs, error: { kind: 'output-limit', message } })

// docs/budgets-and-ledger.md#worked-boundaries
describe('worked boundaries', () => {
  it.each([
    ['return "€"', 7, { logs: [], value: '€' }],
    ['return "€"', 6, limit([], 'ou')],
    ['console.log("abc"); return "xy"', 11, { logs: ['abc'], value: 'xy' }],
    ['console.log("abc"); return "xy"', 10, limit([], 'outer ')],
    ['console.log("abc"); throw "xy"', 11, { logs: ['abc'], error: { kind: 'exception', message: 'xy' } }],
    ['console.log("abc"); throw "xy"', 10, limit([], 'outer ')],
    ['throw "boom"', 8, { logs: [], error: { kind: 'exception', message: 'boom' } }],
    ['throw "boom"', 7, limit([], 'out')],
    ['console.log("12345")', 4, limit([], '')],
    ["console.log('12345'); console.log('123456'); console.log('dropped')", 15, limit([], 'outer outpu')],
    ['enum E { A }', 4, limit([], '')],
    ["return 'x'.repeat(10000)", 64, limit([], 'outer output exceeded 64 bytes')],
    ["throw new Error('x'.repeat(1e6))", 64, limit([], 'outer output exceeded 64 bytes')],
    ["throw '€'.repeat(1000)", 64, limit([], 'outer output exceeded 64 bytes')],
    ["console.log('x'.repeat(56)); return () => 1", 64, limit(['x'.repeat(28)], 'outer output exceeded 64 bytes')],
    ["console.log('start-' + 'x'.repeat(100000))", 96, limit(['start-' + 'x'.repeat(54)], 'outer output exceeded 96 bytes')],
    ["console.log('\"'.repeat(1e6))", 96, limit(['"'.repeat(30)], 'outer output exceeded 96 bytes')],
    [
      "process.stdout.write('a'.repeat(20)); const w = process.stderr.write; w('b'.repeat(100))",
      80,
      limit(['a'.repeat(20), 'b'.repeat(21)], 'outer output exceeded 80 bytes'),
    ],
  ])('%s under %i', async (program, cap, expected) => {
    const result = await runAt(cap, program)
    expect(result).toEqual(expected)
    expect(ledgerBytes(result)).toBeLessThanOrEqual(cap)
  })

  it('keeps 19 entries of runaway logs, exactly 300 bytes', async () => {
    const result = await runAt(300, 'for (let i = 0; i < 1000; i++) console.log("spam line", i)')
    expect(result.logs).toHaveLength(19)
    expect(result.logs.slice(0, 18)).toEqual(Array.from({ length: 18 }, (_, i) => `spam line ${i}`))
    expect(result.logs[18]).toBe('spa')
    expect(result.error).toEqual({ kind: 'output-limit', message: 'outer output exceeded 300 bytes' })
    expect('value' in result).toBe(false)
    expect(ledgerBytes(result)).toBe(300)
  })

  it('floods through every write path into one ledger', async () => {
    const result = await runAt(200, `for (let i = 0; ; i++) {
      console.log('log', i); console.error('err', i); process.stdout.write('out' + i); process.stderr.write('e' + i)
    }`)
    expect(result.error).toEqual({ kind: 'output-limit', message: 'outer output exceeded 200 bytes' })
    expect(Buffer.byteLength(JSON.stringify(result.logs))).toBeLessThan(200)
  })

  it('keeps output emitted right before completion', async () => {
    const payload = 'p'.repeat(100010)
    const result = await runAt(67108864, `process.stdout.write(${JSON.stringify(payload)}); return 'done'`)
    expect(result.value).toBe('done')
    expect(result.logs.join('')).toBe(payload)
  })

  it('caps a pre-aborted result through a fresh ledger', async () => {
    expect(await runAt(64, 'return 1', { signal: AbortSignal.abort('r'.repeat(1000)) }))
      .toEqual(limit([], 'outer output exceeded 64 bytes'))
  })

  it('meters lone surrogates and escapes as JSON.stringify writes them', async () => {
    const value = '\uD800"\\\n\u0001€😀'
    const cost = Buffer.byteLength(JSON.stringify(value))
    expect(await runAt(cost + 2, `return ${JSON.stringify(value)}`)).toEqual({ logs: [], value })
    expect((await runAt(cost + 1, `return ${JSON.stringify(value)}`)).error.kind).toBe('output-limit')
    expect(await runAt(cost + 2, `console.log(${JSON.stringify(value)})`)).toEqual({ logs: [value] })
  })
})

describe('the default 64 MiB boundary', () => {
  it('fits 67108860 characters and refuses 67108861', async () => {
    const { runtime, fiber } = await loadIsolate()
    const fits = await runtime.run({ program: "return 'x'.repeat(67_108_860)", bindings: [] })
    expect(fits.logs).toEqual([])
    expect(fits.value.length).toBe(67108860)
    expect(fits.value === 'x'.repeat(67108860)).toBe(true)
    expect(await runtime.run({ program: "return 'x'.repeat(67_108_861)", bindings: [] }))
      .toEqual(limit([], 'outer output exceeded 67108864 bytes'))
    expect(await runtime.run({ program: 'return new Array(50_000).fill(7)', bindings: [] }))
      .toEqual({ logs: [], value: new Array(50000).fill(7) })
    await fiber.dispose()
  })

  it('meters a 5000-deep completion exactly', async () => {
    const cost = 5000 * 2 + 'null'.length
    const program = 'let a = null; for (let i = 0; i < 5000; i++) a = [a]; return a'
    expect(isNestedNull((await runAt(cost + 2, program)).value, 5000)).toBe(true)
    expect((await runAt(cost + 1, program)).error.kind).toBe('output-limit')
  })
})

describe('onLog streaming', () => {
  it('streams the admitted entries, including a final prefix', async () => {
    const streamed = []
    const result = await runAt(15, "console.log('12345'); console.log('123456'); console.log('dropped')", {
      onLog: (text) => streamed.push(text),
    })
    expect(streamed).toEqual(['12345', '123'])
    expect(result).toEqual(limit([], 'outer outpu'))
    const none = []
    await runAt(6, "console.log('12'); console.log('no-prefix-fits')", { onLog: (text) => none.push(text) })
    expect(none).toEqual(['12'])
  })

  it('never lets a throwing onLog change the result', async () => {
    const result = await runAt(1000, "console.log('a'); console.log('b'); return 1", {
      onLog: () => {
        throw new Error('observer failure')
      },
    })
    expect(result).toEqual({ logs: ['a', 'b'], value: 1 })
  })

  it('streams in order and before the run resolves', async () => {
    const streamed = []
    let resolved = false
    const promise = runAt(10000, 'for (let i = 0; i < 50; i++) { console.log(i); if (i % 10 === 0) await new Promise(r => setTimeout(r, 1)) }', {
      onLog: (text) => {
        expect(resolved).toBe(false)
        streamed.push(text)
      },
    })
    const result = await promise
    resolved = true
    expect(streamed).toEqual(result.logs)
    expect(streamed).toHaveLength(50)
  })
})

describe('results with many entries (taken from the addon a slice per event-loop turn)', () => {
  it('keep every entry, in order, every code unit included', async () => {
    // 50 000 entries: Latin-1, UTF-16, lone surrogates, empty, escapes; more than one slice.
    const program = `
      const kinds = ['x', '€', '\\ud800', '', '\\u0001"\\\\', 'café']
      for (let i = 0; i < 50000; i++) process.stdout.write(kinds[i % kinds.length] + (i % 7 === 0 ? i : ''))
      return 'done'`
    const expected = Array.from({ length: 50000 }, (_, i) => ['x', '€', '\ud800', '', '\u0001"\\', 'café'][i % 6] + (i % 7 === 0 ? i : ''))
    const streamed = []
    const result = await runAt(64 * 1024 * 1024, program, { onLog: (text) => streamed.push(text) })
    expect(result.value).toBe('done')
    expect(result.logs).toHaveLength(50000)
    expect(result.logs).toEqual(expected)
    expect(streamed).toEqual(expected)
  })

  it('runs of equal entries, across slices, keep every entry (they share one string)', async () => {
    // 70 000 entries in runs of 999 equal ones: more than two slices, runs across their edges.
    const kinds = ['same', '€€', '', '\ud800', 'x']
    const program = `
      const kinds = ${JSON.stringify(kinds)}
      for (let i = 0; i < 70000; i++) process.stdout.write(kinds[Math.floor(i / 999) % kinds.length])`
    const expected = Array.from({ length: 70000 }, (_, i) => kinds[Math.floor(i / 999) % kinds.length])
    const result = await runAt(64 * 1024 * 1024, program)
    expect(result.logs).toEqual(expected)
  })

  it('recent short entries, interleaved, keep every entry exactly (they share strings)', async () => {
    // 2 000 distinct short texts (more than the host's table of recent ones has slots, so many
    // share a slot) in both encodings, cycled over 80 000 entries, and a long one between them.
    const program = `
      const texts = Array.from({ length: 2000 }, (_, i) => (i % 3 ? 'k' : '€') + i.toString(36) + (i % 7 ? '' : '\\ud800'))
      for (let i = 0; i < 80000; i++) process.stdout.write(i % 101 ? texts[(i * 7919) % texts.length] : 'y'.repeat(40 + (i % 5)))`
    const texts = Array.from({ length: 2000 }, (_, i) => (i % 3 ? 'k' : '€') + i.toString(36) + (i % 7 ? '' : '\ud800'))
    const expected = Array.from({ length: 80000 }, (_, i) => (i % 101 ? texts[(i * 7919) % texts.length] : 'y'.repeat(40 + (i % 5))))
    const result = await runAt(64 * 1024 * 1024, program)
    expect(result.logs).toEqual(expected)
  })

  it('an output-limit result with many entries is exact at its cap', async () => {
    const cap = 200_000
    const result = await runAt(cap, "for (let i = 0;; i++) process.stdout.write(i % 2 ? 'x' : '€')")
    expect(result.error).toEqual({ kind: 'output-limit', message: `outer output exceeded ${cap} bytes` })
    expect(ledgerBytes(result)).toBeLessThanOrEqual(cap)
    expect(ledgerBytes(result)).toBeGreaterThan(cap - 8)
    expect(result.logs.every((text, i) => text === (i % 2 ? 'x' : '€'))).toBe(true)
    expect(result.logs.length).toBeGreaterThan(16384)
  })
})
