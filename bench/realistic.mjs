// The work agents really send (issue 29), against isolated-vm 5.0.4 in the same process,
// interleaved: a realistic program (three functions, a 1 000-entry object, JSON.stringify, one
// console.log line the host receives, a structured result) run
//   back to back   each run as soon as the last one of the same backend settled (blocks of ten
//                  runs of one backend, in turn; p50, p99)
//   paced          runs 10 ms apart, an agent's runs turns apart (p50, p99)
//   16 / 64 at once  wall time of a burst (median of the rounds)
// in the default configuration (`containment: 'process'`, one run per process) and in
// `containment: 'thread'`. isolated-vm gets what a host needs from it too: a fresh isolate and
// context per run, `console.log` delivered to the host, the result copied out. The backends take
// turns (each in every place of the order), so load and thermal drift fall on all alike.
// Ratios are isolated-vm's time over ours (above 1: we are faster; the target is >= 1.5).
// `--load` keeps one core busy in a child process throughout (hosts are shared machines).
// isolated-vm needs --no-node-snapshot on Node >= 20: this script restarts itself with it.
// Usage: node bench/realistic.mjs [runs=100] [--load] [--entries=1000]
import { spawn } from 'node:child_process'
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { isolatedVmHere, IVM_VERSION, runInIsolatedVm } from './isolated-vm.mjs'
import { realisticProgram } from './programs.mjs'
import { inTurn, p50, p99, takeTurns } from './stats.mjs'

const ivm = isolatedVmHere()
const args = process.argv.slice(2)
const RUNS = Number(args.find((a) => /^\d+$/.test(a)) ?? 100)
const LOADED = args.includes('--load')
const ENTRIES = Number(args.find((a) => a.startsWith('--entries='))?.slice(10) ?? 1000)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const REALISTIC = realisticProgram(ENTRIES)

/** Checks a run's value, so no backend is timed doing less than the others. */
function check(value, logs) {
  if (!Array.isArray(value?.top) || value.top.length !== 5 || typeof value.size !== 'number') throw new Error(`a realistic run failed: ${JSON.stringify(value)}`)
  if (logs !== 1) throw new Error(`a realistic run printed ${logs} lines, not 1`)
}

async function ours(containment) {
  const ctx = new Context()
  const fiber = await ctx.plugin(IsolateCodeRuntime, { containment })
  const runtime = ctx.codeRuntime
  return {
    run: async () => {
      const result = await runtime.run({ program: REALISTIC, bindings: [] })
      check(result.value, result.logs.length)
    },
    dispose: () => fiber.dispose(),
  }
}

/** isolated-vm as a host would use it (bench/isolated-vm.mjs, `runInIsolatedVm`). */
function isolatedVm() {
  return {
    run: async () => {
      const { value, logs } = await runInIsolatedVm(ivm, REALISTIC)
      check(value, logs.length)
    },
    dispose: () => {},
  }
}

/** Samples of each backend, the backends taking turns (`takeTurns`, bench/stats.mjs). */
const interleaved = (backends, pace) =>
  takeTurns(Object.fromEntries(Object.entries(backends).map(([k, b]) => [k, b.run])), { runs: RUNS, paceMs: pace })

/** Wall time of `n` runs at once, each backend in turn, `rounds` times. */
async function bursts(backends, n, rounds = 7) {
  const walls = Object.fromEntries(Object.keys(backends).map((k) => [k, []]))
  for (let round = 0; round < rounds; round++) {
    for (const [name, backend] of inTurn(backends, round)) {
      await sleep(200)
      const start = performance.now()
      await Promise.all(Array.from({ length: n }, () => backend.run()))
      walls[name].push(performance.now() - start)
    }
  }
  return walls
}

const load = LOADED ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined
const backends = { process: await ours('process'), thread: await ours('thread'), ivm: isolatedVm() }
for (const backend of Object.values(backends)) for (let i = 0; i < 10; i++) await backend.run()

const fmt = (x) => x.toFixed(2).padStart(7)
const report = (label, samples) => {
  const med = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, p50(xs)]))
  const tail = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, p99(xs)]))
  console.log(
    `${label.padEnd(14)} process ${fmt(med.process)} ms (p99 ${fmt(tail.process)})   thread ${fmt(med.thread)} ms (p99 ${fmt(tail.thread)})   isolated-vm ${fmt(med.ivm)} ms (p99 ${fmt(tail.ivm)})   ` +
      `isolated-vm / ours: process ${(med.ivm / med.process).toFixed(2)}x, thread ${(med.ivm / med.thread).toFixed(2)}x`,
  )
}
console.log(`realistic program (${ENTRIES} entries), ${RUNS} runs per backend, interleaved; isolated-vm ${IVM_VERSION}; Node ${process.version}${LOADED ? '; one busy core in the background' : ''}; target: every ratio >= 1.5`)
report('back to back', await interleaved(backends, 0))
report('paced 10 ms', await interleaved(backends, 10))
report('16 at once', await bursts(backends, 16))
report('64 at once', await bursts(backends, 64))
for (const backend of Object.values(backends)) await backend.dispose()
load?.kill()
process.exit(0)
