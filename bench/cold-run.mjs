// Cold run: `return 1`, sequentially, each in a fresh substrate. This addon (a fresh V8 isolate on
// its own thread per run) against the way the replaced backend ran programs: a fresh
// worker_threads Worker per run (env: {}, execArgv: []), program posted in, result posted back.
// Usage: node bench/cold-run.mjs [runs=300]
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { ms, p50, p99 } from './stats.mjs'
import { workerRun } from './worker-baseline.mjs'

const RUNS = Number(process.argv[2] ?? 300)
const WARMUP = 20

async function measure(label, runOnce) {
  for (let i = 0; i < WARMUP; i++) await runOnce()
  const times = []
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now()
    const result = await runOnce()
    times.push(performance.now() - start)
    if (result.value !== 1) throw new Error(`${label} returned ${JSON.stringify(result)}`)
  }
  console.log(`${label.padEnd(28)} p50 ${ms(p50(times)).padStart(10)}   p99 ${ms(p99(times)).padStart(10)}`)
  return times
}

const ctx = new Context()
await ctx.plugin(IsolateCodeRuntime)
const runtime = ctx.codeRuntime

console.log(`cold run of \`return 1\`, ${RUNS} sequential runs after ${WARMUP} warm-up runs`)
const isolate = await measure('code-runtime-native isolate', () => runtime.run({ program: 'return 1', bindings: [] }))
const worker = await measure('worker_threads baseline', () => workerRun('return 1'))
console.log(`ratio (worker / isolate)     p50 ${(p50(worker) / p50(isolate)).toFixed(1)}×   p99 ${(p99(worker) / p99(isolate)).toFixed(1)}×   (target ≥ 10×)`)
