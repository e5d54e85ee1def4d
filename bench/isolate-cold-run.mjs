// Cold run of `return 1` through the seam, sequentially, for both containment tiers of
// IsolateCodeRuntime (`containment: 'process'`: supervised sandbox processes with a pre-warmed
// isolate; `'thread'`: a fresh isolate on a thread of the host), against
//   (a) a fresh worker_threads Worker per run (bench/worker-baseline.mjs), and
//   (b) isolated-vm 5.x's cold isolate: new ivm.Isolate({ memoryLimit }) + context +
//       compileScript('1').run + dispose, per run.
// Each tier is labelled by what runtime.sandbox reports, not by the key passed: a runtime without
// the process tier ignores `containment` and runs on threads.
//
// isolated-vm is not a dependency of this package: it is installed on demand into a cache outside
// the repository (CRN_BENCH_CACHE, default ~/.cache/code-runtime-native/bench) with
// `npm install --prefix <dir> isolated-vm@5.0.4`, building against the Node headers in /usr/include/node
// when they are there (npm_config_nodedir=/usr; prebuilt binaries come from GitHub, which may be
// unreachable). If that fails the baseline is skipped with the reason. isolated-vm needs
// `--no-node-snapshot` on Node ≥ 20, which would also slow the Worker baseline, so it is timed in a
// child Node started with that flag (the same loop, timed inside the child).
// Usage: node bench/isolate-cold-run.mjs [runs=300]
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { ms, p50, p99 } from './stats.mjs'
import { ensureIsolatedVm, IVM_DIR } from './isolated-vm.mjs'
import { workerRun } from './worker-baseline.mjs'

const RUNS = Number(process.argv[2] ?? 300)
const WARMUP = 20
const IVM_MEMORY_LIMIT_MB = 128

async function measure(label, runOnce, paceMs = 0) {
  for (let i = 0; i < WARMUP; i++) await runOnce()
  const times = []
  for (let i = 0; i < RUNS; i++) {
    if (paceMs > 0) await new Promise((r) => setTimeout(r, paceMs))
    const start = performance.now()
    const result = await runOnce()
    times.push(performance.now() - start)
    if (result.value !== 1) throw new Error(`${label} returned ${JSON.stringify(result)}`)
  }
  line(label, times)
  return times
}

function line(label, times) {
  console.log(`${label.padEnd(50)} p50 ${ms(p50(times)).padStart(10)}   p99 ${ms(p99(times)).padStart(10)}`)
}

function ratio(label, num, den, target) {
  if (!num || !den) return console.log(`${label.padEnd(50)} (not measured)`)
  console.log(`${label.padEnd(50)} p50 ${(p50(num) / p50(den)).toFixed(1)}×   p99 ${(p99(num) / p99(den)).toFixed(1)}×   (target ${target})`)
}

/** Times isolated-vm's cold isolate in a child Node with --no-node-snapshot; `{ times }` or `{ reason }`. */
function isolatedVmTimes() {
  const reason = ensureIsolatedVm()
  if (reason) return { reason }
  const child = `
    import { createRequire } from 'node:module'
    const ivm = createRequire(${JSON.stringify(path.join(IVM_DIR, 'package.json'))})('isolated-vm')
    const once = async () => {
      const isolate = new ivm.Isolate({ memoryLimit: ${IVM_MEMORY_LIMIT_MB} })
      const context = await isolate.createContext()
      const script = await isolate.compileScript('1')
      const value = await script.run(context)
      isolate.dispose()
      return { value }
    }
    for (let i = 0; i < ${WARMUP}; i++) await once()
    const times = []
    for (let i = 0; i < ${RUNS}; i++) {
      const start = performance.now()
      const { value } = await once()
      times.push(performance.now() - start)
      if (value !== 1) throw new Error('isolated-vm returned ' + value)
    }
    process.stdout.write(JSON.stringify({ version: createRequire(${JSON.stringify(path.join(IVM_DIR, 'package.json'))})('isolated-vm/package.json').version, times }))`
  const out = spawnSync(process.execPath, ['--no-node-snapshot', '--input-type=module', '-e', child], {
    encoding: 'utf8',
    timeout: 10 * 60 * 1000,
    maxBuffer: 64 << 20,
  })
  try {
    return JSON.parse(out.stdout)
  } catch {
    return { reason: `the isolated-vm child failed (${out.signal ?? `status ${out.status}`}): ${out.stderr.trim().split('\n').slice(-5).join(' | ')}` }
  }
}

async function tier(containment, paceMs = 0) {
  const ctx = new Context()
  const fiber = await ctx.plugin(IsolateCodeRuntime, { containment })
  const runtime = ctx.codeRuntime
  const inProcess = runtime.sandbox?.process === true
  const label = inProcess
    ? `containment '${containment}': sandbox process`
    : `containment '${containment}': host thread${containment === 'process' ? ' (no process tier)' : ''}`
  const paced = paceMs > 0 ? `, ${paceMs} ms apart` : ''
  const times = await measure(label + paced, () => runtime.run({ program: 'return 1', bindings: [] }), paceMs)
  await fiber.dispose()
  return { times, inProcess }
}

console.log(`cold run of \`return 1\`, ${RUNS} sequential runs after ${WARMUP} warm-up runs each`)
const processTier = await tier('process')
// Back to back, each run overlaps the previous process preparing its next isolate (about 3 ms
// of CPU): on a 2-core machine the two compete. Runs a few ms apart find an isolate ready, as
// an agent's runs (model turns apart) do.
const pacedTier = await tier('process', 10)
const threadTier = await tier('thread')
if (!processTier.inProcess) console.log("  note: runtime.sandbox?.process is not true: the 'process' key was ignored, both rows ran on threads")
const worker = await measure('worker_threads Worker per run', () => workerRun('return 1'))
const ivm = isolatedVmTimes()
if (ivm.times) line(`isolated-vm ${ivm.version} cold isolate (child)`, ivm.times)
else console.log(`isolated-vm baseline skipped: ${ivm.reason}`)

const measured = processTier.inProcess ? 'process' : 'process (ran on threads)'
ratio(`worker / ${measured}`, worker, processTier.times, '≥ 20×')
ratio(`isolated-vm / ${measured}`, ivm.times, processTier.times, '> 1×')
ratio(`worker / ${measured}, paced`, worker, pacedTier.times, '≥ 20×')
ratio(`isolated-vm / ${measured}, paced`, ivm.times, pacedTier.times, '> 1×')
ratio('worker / thread', worker, threadTier.times, '≥ 10×')
ratio('isolated-vm / thread', ivm.times, threadTier.times, 'none')
