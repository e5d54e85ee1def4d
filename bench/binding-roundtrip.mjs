// Binding round trip: `await tools.noop({})` from the program to the host's JavaScript function
// and back, timed inside the program with performance.now(). 10 000 sequential calls in one run,
// then the same number of calls 100 at a time with Promise.all; then the same two in Python
// (`await tools.noop({})` timed with time.perf_counter, `asyncio.gather` for the concurrent one).
// Usage: node bench/binding-roundtrip.mjs [calls=10000]
import { Context } from 'cordis'
import { execFileSync } from 'node:child_process'
import { IsolateCodeRuntime, PythonCodeRuntime } from '../lib/index.mjs'
import { p50, p99, us } from './stats.mjs'

const CALLS = Number(process.argv[2] ?? 10000)

const ctx = new Context()
await ctx.plugin(IsolateCodeRuntime)
const isolates = ctx.codeRuntime
// `python3` may be a shim; the runtime wants the interpreter itself.
const pythonBin = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()
const py = new Context()
await py.plugin(PythonCodeRuntime, { pythonBin, cpuSeconds: 120, maxWallMs: 120_000, maxValueBytes: 4 << 20 })
const pythons = py.get('codeRuntime')
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

const pythonSequential = `
import time
for _ in range(200):
    await tools.noop({})
times = []
start = time.perf_counter()
for _ in range(${CALLS}):
    t = time.perf_counter()
    await tools.noop({})
    times.append((time.perf_counter() - t) * 1000)
return {'times': times, 'total': (time.perf_counter() - start) * 1000}`

const pythonConcurrent = `
import asyncio, time
times = []
start = time.perf_counter()
for _ in range(${CALLS / 100}):
    t = time.perf_counter()
    await asyncio.gather(*(tools.noop({}) for _ in range(100)))
    times.append((time.perf_counter() - t) * 1000)
return {'times': times, 'total': (time.perf_counter() - start) * 1000}`

function report(label, { times, total }, callsPerSample) {
  const perSecond = (CALLS / total) * 1000
  console.log(
    `${label.padEnd(46)} p50 ${us(p50(times) / callsPerSample).padStart(9)}   p99 ${us(p99(times) / callsPerSample).padStart(9)}   ${Math.round(perSecond).toLocaleString('en')} calls/s`,
  )
  return { p50: p50(times) / callsPerSample, perSecond }
}

console.log(`binding round trip, ${CALLS} calls per run (targets: p50 ≤ 50 µs, ≥ 20 000 calls/s)`)
async function measure(runtime, label, programs) {
  const seq = await runtime.run({ program: programs[0], bindings })
  if (seq.error) throw new Error(JSON.stringify(seq.error))
  const a = report(`${label}: sequential (per call)`, seq.value, 1)
  const con = await runtime.run({ program: programs[1], bindings })
  if (con.error) throw new Error(JSON.stringify(con.error))
  const b = report(`${label}: 100 concurrent (per call)`, con.value, 100)
  return { a, b }
}

const { a, b } = await measure(isolates, 'TypeScript', [sequential, concurrent])
console.log(`targets met: p50 ${a.p50 * 1000 <= 50 ? 'yes' : 'no'}, throughput ${Math.min(a.perSecond, b.perSecond) >= 20000 ? 'yes' : 'no'}`)
await measure(pythons, 'Python', [pythonSequential, pythonConcurrent])
py.registry.delete(PythonCodeRuntime)
ctx.registry.delete(IsolateCodeRuntime)
