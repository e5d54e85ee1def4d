// Binding round trip: `await tools.noop({})` from the program to the host's JavaScript function
// and back, timed inside the program with performance.now(). 10 000 sequential calls in one run,
// then the same number of calls 100 at a time with Promise.all.
// Usage: node bench/binding-roundtrip.mjs [calls=10000]
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { p50, p99, us } from './stats.mjs'

const CALLS = Number(process.argv[2] ?? 10000)

const ctx = new Context()
await ctx.plugin(IsolateCodeRuntime)
const bindings = [{ global: 'tools', functions: { noop: async () => null } }]

const sequential = `
  for (let i = 0; i < 200; i++) await tools.noop({})
  const times = []
  const start = performance.now()
  for (let i = 0; i < ${CALLS}; i++) {
    const t = performance.now()
    await tools.noop({})
    times.push(performance.now() - t)
  }
  return { times, total: performance.now() - start }`

const concurrent = `
  const times = []
  const start = performance.now()
  for (let batch = 0; batch < ${CALLS / 100}; batch++) {
    const t = performance.now()
    await Promise.all(Array.from({ length: 100 }, () => tools.noop({})))
    times.push(performance.now() - t)
  }
  return { times, total: performance.now() - start }`

function report(label, { times, total }, callsPerSample) {
  const perSecond = (CALLS / total) * 1000
  console.log(
    `${label.padEnd(34)} p50 ${us(p50(times) / callsPerSample).padStart(9)}   p99 ${us(p99(times) / callsPerSample).padStart(9)}   ${Math.round(perSecond).toLocaleString('en')} calls/s`,
  )
  return { p50: p50(times) / callsPerSample, perSecond }
}

console.log(`binding round trip, ${CALLS} calls per run (targets: p50 ≤ 50 µs, ≥ 20 000 calls/s)`)
const seq = await ctx.codeRuntime.run({ program: sequential, bindings })
if (seq.error) throw new Error(JSON.stringify(seq.error))
const a = report('sequential (per call)', seq.value, 1)
const con = await ctx.codeRuntime.run({ program: concurrent, bindings })
if (con.error) throw new Error(JSON.stringify(con.error))
const b = report('100 concurrent (per call, amortised)', con.value, 100)
console.log(`targets met: p50 ${a.p50 * 1000 <= 50 ? 'yes' : 'no'}, throughput ${Math.min(a.perSecond, b.perSecond) >= 20000 ? 'yes' : 'no'}`)
