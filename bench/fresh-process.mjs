// The cost of a fresh sandbox process per run (docs/sandbox.md#host-safety), against isolated-vm in the
// same process. For `containment: 'process'` with its default (one run per process: every run is
// served by a process its template forked ahead of time) and with `maxRunsPerProcess: 100` (reuse,
// for trusted workloads), and for isolated-vm 5 (a new ivm.Isolate per run):
//   paced          `return 1`, runs 10 ms apart (an agent's runs, turns apart): p50 (target ≤ 1 ms)
//   back to back   `return 1`, each run as soon as the last one settled: p50 (target ≤ 2 ms)
//   round trip     `await tools.noop({})` 10 000 times in one fresh run: the mean over the whole
//                  run, its first calls included (target ≤ 20 µs)
// Bursts of realistic runs are bench/realistic.mjs's: this script once timed 64 runs of a lighter
// program (two binding calls and an integer loop, which writes few pages in a forked process) with
// isolated-vm's console a no-op and each backend in a phase of its own, and reported 1.26x
// isolated-vm where the interleaved comparison of what a host runs measures 0.64-0.76x.
// isolated-vm needs --no-node-snapshot on Node ≥ 20: this script restarts itself with it. It is
// installed on demand as bench/isolate-cold-run.mjs does (CRN_BENCH_CACHE).
// Usage: node bench/fresh-process.mjs [runs=200]
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { ensureIsolatedVm, IVM_DIR } from './isolated-vm.mjs'
import { p50 } from './stats.mjs'

if (!process.execArgv.includes('--no-node-snapshot')) {
  const reason = ensureIsolatedVm()
  if (reason) console.log(`isolated-vm baseline skipped: ${reason}`)
  const out = spawnSync(process.execPath, ['--no-node-snapshot', ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, CRN_NO_IVM: reason ? '1' : '' } })
  process.exit(out.status ?? 1)
}

const RUNS = Number(process.argv[2] ?? 200)
const CALLS = 10000
const ivm = process.env.CRN_NO_IVM ? undefined : createRequire(path.join(IVM_DIR, 'package.json'))('isolated-vm')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const TOOLS = { noop: async () => null }

/** Our runtime as one backend of the comparison. */
async function ours(config) {
  const ctx = new Context()
  const fiber = await ctx.plugin(IsolateCodeRuntime, { containment: 'process', ...config })
  const runtime = ctx.codeRuntime
  const bindings = [{ global: 'tools', functions: TOOLS }]
  return {
    returnOne: async () => (await runtime.run({ program: 'return 1', bindings: [] })).value,
    roundTrip: async () => {
      const program = `const start = performance.now(); for (let i = 0; i < ${CALLS}; i++) await tools.noop({}); return (performance.now() - start) / ${CALLS}`
      return (await runtime.run({ program, bindings })).value
    },
    dispose: () => fiber.dispose(),
  }
}

/** isolated-vm: a fresh isolate and context per run, host functions as references. */
function isolatedVm() {
  const run = async (code, functions = {}) => {
    const isolate = new ivm.Isolate({ memoryLimit: 128 })
    try {
      const context = await isolate.createContext()
      const refs = Object.values(functions).map((fn) => new ivm.Reference(async (arg) => new ivm.ExternalCopy(await fn(arg)).copyInto()))
      const names = Object.keys(functions)
      const prelude = names
        .map((name, i) => `const ${name} = (arg) => $${i}.apply(undefined, [arg], { arguments: { copy: true }, result: { promise: true, copy: true } })`)
        .join('\n')
      return await context.evalClosure(`${prelude}\nconst tools = { ${names.join(', ')} }\nconst console = { log: () => {} }\nreturn (async () => { ${code} })()`, refs, {
        result: { promise: true, copy: true },
      })
    } finally {
      isolate.dispose()
    }
  }
  return {
    returnOne: () => run('return 1'),
    roundTrip: () =>
      // A bare context has no performance.now(): Date.now() over the whole run is precise enough.
      run(`const start = Date.now(); for (let i = 0; i < ${CALLS}; i++) await noop({}); return (Date.now() - start) / ${CALLS}`, { noop: TOOLS.noop }),
    dispose: () => {},
  }
}

async function measure(backend) {
  for (let i = 0; i < 20; i++) await backend.returnOne()
  const paced = []
  for (let i = 0; i < RUNS; i++) {
    await sleep(10)
    const start = performance.now()
    await backend.returnOne()
    paced.push(performance.now() - start)
  }
  const b2b = []
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now()
    await backend.returnOne()
    b2b.push(performance.now() - start)
  }
  const trips = []
  for (let k = 0; k < 5; k++) trips.push((await backend.roundTrip()) * 1000)
  await backend.dispose()
  return { paced: p50(paced), b2b: p50(b2b), roundTrip: p50(trips) }
}

const rows = [
  ["'process', one run per process (default)", () => ours({})],
  ["'process', maxRunsPerProcess: 100", () => ours({ maxRunsPerProcess: 100 })],
]
if (ivm) rows.push([`isolated-vm ${createRequire(path.join(IVM_DIR, 'package.json'))('isolated-vm/package.json').version}, fresh isolate`, isolatedVm])
console.log(`paced and back-to-back: ${RUNS} runs each (p50); round trip: 5 fresh runs of ${CALLS} calls (p50 of each run's mean)`)
const results = []
for (const [label, make] of rows) {
  const r = await measure(await make())
  results.push([label, r])
  console.log(
    `${label.padEnd(48)} paced ${r.paced.toFixed(2).padStart(6)} ms   back to back ${r.b2b.toFixed(2).padStart(6)} ms   round trip ${r.roundTrip.toFixed(1).padStart(6)} µs`,
  )
}
const [, fresh] = results[0]
console.log(
  `targets (default): paced ≤ 1 ms ${fresh.paced <= 1 ? 'met' : 'not met'}; back to back ≤ 2 ms ${fresh.b2b <= 2 ? 'met' : 'not met'}; round trip ≤ 20 µs ${fresh.roundTrip <= 20 ? 'met' : 'not met'}`,
)
process.exit(0)
