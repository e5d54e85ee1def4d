// Long computations (bench/programs.mjs, `computePrograms`), where V8's optimising tiers pay
// back, in both tiers against isolated-vm 5.0.4 in the same process, interleaved: the check that
// when and how our V8 optimises (src/isolate/platform.rs, `TIERING`) costs nothing on the programs
// that need optimised code. Prints each program's median run time and isolated-vm's over ours.
// Usage: node bench/compute.mjs [runs=15] [--load]
import { spawn } from 'node:child_process'
import { isDeepStrictEqual } from 'node:util'
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { isolatedVmHere, IVM_VERSION, runInIsolatedVm } from './isolated-vm.mjs'
import { computePrograms } from './programs.mjs'
import { inTurn, p50 } from './stats.mjs'

const ivm = isolatedVmHere()
const args = process.argv.slice(2)
const RUNS = Number(args.find((a) => /^\d+$/.test(a)) ?? 15)
const LOADED = args.includes('--load')

async function ours(containment) {
  const ctx = new Context()
  const fiber = await ctx.plugin(IsolateCodeRuntime, { containment, computeMs: 60_000 })
  return {
    run: async (program) => {
      const result = await ctx.codeRuntime.run({ program, bindings: [] })
      if (result.error) throw new Error(`a run failed: ${JSON.stringify(result.error)}`)
      return result.value
    },
    dispose: () => fiber.dispose(),
  }
}

const backends = {
  process: await ours('process'),
  thread: await ours('thread'),
  ivm: { run: async (program) => (await runInIsolatedVm(ivm, program)).value, dispose: () => {} },
}
const load = LOADED ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined
console.log(`long computations, ${RUNS} runs per backend, interleaved; isolated-vm ${IVM_VERSION}; Node ${process.version}${LOADED ? '; one busy core in the background' : ''}`)
for (const [name, { program, value }] of Object.entries(computePrograms)) {
  const samples = { process: [], thread: [], ivm: [] }
  let first
  for (let i = 0; i < RUNS + 2; i++) {
    for (const [backend, { run }] of inTurn(backends, i)) {
      const start = performance.now()
      const got = await run(program)
      const took = performance.now() - start
      first ??= got
      const expected = value ?? first
      if (!isDeepStrictEqual(got, expected)) throw new Error(`${name} on ${backend} returned ${JSON.stringify(got)}, not ${JSON.stringify(expected)}`)
      if (i >= 2) samples[backend].push(took)
    }
  }
  const med = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, p50(xs)]))
  const fmt = (x) => `${x.toFixed(1).padStart(7)} ms`
  console.log(
    `${name.padEnd(26)} process ${fmt(med.process)}   thread ${fmt(med.thread)}   isolated-vm ${fmt(med.ivm)}   ` +
      `isolated-vm / ours: process ${(med.ivm / med.process).toFixed(2)}x, thread ${(med.ivm / med.thread).toFixed(2)}x`,
  )
}
for (const backend of Object.values(backends)) await backend.dispose()
load?.kill()
process.exit(0)
