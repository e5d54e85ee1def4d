// Nothing grows with the number of runs: tens of thousands of runs per case, the host's JavaScript
// heap after a forced GC and its resident memory sampled every `every` runs, and the growth per
// run as the least-squares slope over the samples after the warm-up (bytes per run). Cases: both
// isolate tiers, `return 1` and a run with one binding call, and Python (fewer runs: each is a
// child process), also under a file policy. RSS includes V8's young generation growing towards its
// cap (up to tens of MiB, faster the more a run allocates); `--max-semi-space-size=1` takes that out.
// Durable cases (docs/durable.md): each "run" is a runDurable() that pauses at an approval and
// its resume from the stored journal, so the runs count pairs.
// Usage: node --expose-gc bench/soak.mjs [runs=20000] [case…] [--json]
//   cases: process-return, process-call, thread-return, thread-call, thread-modules, python-return, python-call,
//          python-policy, process-durable, thread-durable, python-durable
//   --json: one JSON line per case instead (__test__/soak-growth.test.mjs reads them)
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { IsolateCodeRuntime, PythonCodeRuntime, PythonPtcRuntime, suspend } from '../lib/index.mjs'

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc bench/soak.mjs')
  process.exit(2)
}

const args = process.argv.slice(2).filter((a) => a !== '--json')
const JSON_LINES = process.argv.includes('--json')
const RUNS = Number(args[0] ?? 20000)
const DURABLE_TS = 'const a = await tools.echo(Math.random() < 2 ? 1 : 0)\nreturn (await tools.approve(a)) * (Date.now() > 0 ? 1 : 0)'
const DURABLE_PY = 'import random, time\na = await tools.echo(1 if random.random() < 2 else 0)\nreturn (await tools.approve(a)) * (1 if time.time() > 0 else 0)'
const CASES = {
  'process-return': { Class: IsolateCodeRuntime, config: { containment: 'process' }, program: 'return 1', runs: RUNS },
  'process-call': { Class: IsolateCodeRuntime, config: { containment: 'process' }, program: 'return await tools.echo(1)', runs: RUNS },
  'thread-return': { Class: IsolateCodeRuntime, config: { containment: 'thread' }, program: 'return 1', runs: RUNS },
  'thread-call': { Class: IsolateCodeRuntime, config: { containment: 'thread' }, program: 'return await tools.echo(1)', runs: RUNS },
  // A data: module, node:vm with its timeout (a timer thread per call) and a binding call, in
  // the host's own process: what the module loader and vm contexts keep per run.
  'thread-modules': {
    Class: IsolateCodeRuntime,
    config: { containment: 'thread' },
    program:
      "const { one } = await import('data:text/javascript,export const one = 1'); const vm = await import('node:vm'); " +
      "return vm.runInNewContext('one', { one }, { timeout: 1000 }) * await tools.echo(1)",
    runs: RUNS,
  },
  'python-return': { Class: PythonCodeRuntime, config: {}, program: 'return 1', runs: Math.ceil(RUNS / 10) },
  'python-call': { Class: PythonCodeRuntime, config: {}, program: 'return await tools.echo(1)', runs: Math.ceil(RUNS / 10) },
  // The ptc seam under a read-only file policy whose workspace changes every 3 runs among three:
  // each run takes a spare booted for its policy, and a change of policy releases one.
  'python-policy': { Class: PythonPtcRuntime, config: {}, program: 'return 1', runs: Math.ceil(RUNS / 10), workspaces: 3 },
  'process-durable': { Class: IsolateCodeRuntime, config: { containment: 'process' }, program: DURABLE_TS, runs: Math.ceil(RUNS / 4), durable: true },
  'thread-durable': { Class: IsolateCodeRuntime, config: { containment: 'thread' }, program: DURABLE_TS, runs: Math.ceil(RUNS / 4), durable: true },
  'python-durable': { Class: PythonCodeRuntime, config: {}, program: DURABLE_PY, runs: Math.ceil(RUNS / 20), durable: true },
}
const chosen = args.slice(1).length > 0 ? args.slice(1) : Object.keys(CASES)
const tools = { global: 'tools', functions: { echo: async (x) => x } }

/** Heap in use after a full collection (twice: weak callbacks and finalizers run in between). */
async function settledHeap() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc()
    await new Promise((r) => setImmediate(r))
  }
  return process.memoryUsage().heapUsed
}

/** Runs of the ptc seam under a read-only policy on one of `count` workspaces, changing every 3 runs. */
function policyRuns(runtime, program, count) {
  const root = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'crn-soak-'))
  const dirs = Array.from({ length: count }, (_, i) => fs.mkdirSync(path.join(root, `ws-${i}`), { recursive: true }))
  const run = (i) => {
    const workspaceRoot = dirs[Math.floor(i / 3) % count]
    return runtime.run(runtime.resolve({ program, bindings: [], cwd: workspaceRoot, sandboxPolicy: { mode: 'read-only', workspaceRoot } }))
  }
  run.cleanup = () => fs.rmSync(root, { recursive: true, force: true })
  return run
}

/** A durable run paused at its approval, then resumed from its journal as a host stores it. */
function durableRuns(runtime, program) {
  return async () => {
    let approved = false
    const functions = { echo: async (x) => x, approve: async (x) => (approved ? x : Promise.reject(suspend({ x }))) }
    const bindings = [{ global: 'tools', functions }]
    const first = await runtime.runDurable({ program, bindings })
    if (first.suspended === undefined) throw new Error(`the durable run did not pause: ${JSON.stringify(first)}`)
    approved = true
    return runtime.runDurable({ program, bindings, journal: JSON.parse(JSON.stringify(first.journal)) })
  }
}

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length
  const mx = points.reduce((s, p) => s + p.x, 0) / n
  const my = points.reduce((s, p) => s + p.y, 0) / n
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0)
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0)
  return sxx === 0 ? 0 : sxy / sxx
}

/** Runs one case; returns `{ heapPerRun, rssPerRun, heapGrowth, rssGrowth, runs }`. */
export async function soak({ Class, config, program, runs, workspaces, durable }, { every = Math.max(1, Math.floor(runs / 20)), warmup = Math.floor(runs / 4) } = {}) {
  const ctx = new Context()
  const fiber = await ctx.plugin(Class, config)
  const heap = []
  const rss = []
  const run = workspaces
    ? policyRuns(ctx.get('ptcRuntime'), program, workspaces)
    : durable
      ? durableRuns(ctx.get('codeRuntime'), program)
      : ((runtime) => () => runtime.run({ program, bindings: [tools] }))(ctx.get('codeRuntime'))
  for (let i = 1; i <= runs; i++) {
    const result = await run(i)
    if (result.value !== 1) throw new Error(`run ${i} returned ${JSON.stringify(result)}`)
    if (i >= warmup && i % every === 0) {
      heap.push({ x: i, y: await settledHeap() })
      rss.push({ x: i, y: process.memoryUsage().rss })
    }
  }
  await fiber.dispose()
  run.cleanup?.()
  return {
    runs,
    heapPerRun: slope(heap),
    rssPerRun: slope(rss),
    heapGrowth: heap.at(-1).y - heap[0].y,
    rssGrowth: rss.at(-1).y - rss[0].y,
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const name of chosen) {
    const started = performance.now()
    const r = await soak(CASES[name])
    if (JSON_LINES) {
      console.log(JSON.stringify({ case: name, ...r }))
      continue
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(0)
    console.log(
      `${name.padEnd(16)} ${String(r.runs).padStart(6)} runs  heap after GC ${r.heapPerRun.toFixed(1).padStart(8)} B/run (${(r.heapGrowth / 1024).toFixed(0)} KiB)   RSS ${r.rssPerRun.toFixed(1).padStart(8)} B/run (${(r.rssGrowth / 1024).toFixed(0)} KiB)   ${seconds} s`,
    )
  }
  process.exit(0)
}
