// Cold-run latency of PythonCodeRuntime: `return 1` end to end (stage, spawn, boot, run, done,
// teardown, group reaped) against a bare `python3 -I -c pass` spawned from Node. Prints p50/p99
// and the ratio (target ≤ 1.5×). Benchmarks print; they assert nothing.
//
//   node bench/python-cold-run.mjs [runs=100]
import { execFileSync, spawn } from 'node:child_process'
import { Context } from 'cordis'
import { PythonCodeRuntime } from '../lib/index.mjs'

const RUNS = Number(process.argv[2] ?? 100)
const WARMUP = 5
// The real interpreter behind `python3` on PATH (the runtime spawns this one too: decision 14).
const shim = execFileSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).trim()
const real = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]
}
const fmt = (ms) => `${ms.toFixed(1)} ms`

/** Times each candidate RUNS times, interleaved so machine load affects all of them alike. */
async function timeAll(candidates) {
  for (const fn of Object.values(candidates)) for (let i = 0; i < WARMUP; i++) await fn()
  const samples = Object.fromEntries(Object.keys(candidates).map((k) => [k, []]))
  for (let i = 0; i < RUNS; i++) {
    for (const [name, fn] of Object.entries(candidates)) {
      const t = process.hrtime.bigint()
      await fn()
      samples[name].push(Number(process.hrtime.bigint() - t) / 1e6)
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, { p50: percentile(xs, 50), p99: percentile(xs, 99) }]))
}

const bare = (bin) => () =>
  new Promise((resolve, reject) => {
    const child = spawn(bin, ['-I', '-c', 'pass'], { stdio: 'ignore' })
    child.on('error', reject)
    child.on('close', resolve)
  })

const ctx = new Context()
await ctx.plugin(PythonCodeRuntime)
const runtime = ctx.get('codeRuntime')
const runtimeRun = async () => {
  const r = await runtime.run({ program: 'return 1', bindings: [] })
  if (r.value !== 1) throw new Error(`unexpected result ${JSON.stringify(r)}`)
}

const { base, ours, viaShim } = await timeAll({ base: bare(real), ours: runtimeRun, viaShim: bare(shim) })

console.log(`interpreter: ${real} (PATH has ${shim})`)
console.log(`runs: ${RUNS} (+${WARMUP} warmup)`)
console.log(`bare \`python3 -I -c pass\` (real interpreter): p50 ${fmt(base.p50)}  p99 ${fmt(base.p99)}`)
console.log(`PythonCodeRuntime \`return 1\`:               p50 ${fmt(ours.p50)}  p99 ${fmt(ours.p99)}`)
console.log(`ratio (runtime / bare):                        p50 ${(ours.p50 / base.p50).toFixed(2)}x  p99 ${(ours.p99 / base.p99).toFixed(2)}x  (target <= 1.5x)`)
console.log(`for reference, bare via the PATH shim:         p50 ${fmt(viaShim.p50)}  p99 ${fmt(viaShim.p99)}`)
