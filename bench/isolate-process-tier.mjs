// The isolate runtime's process containment tier (`containment: 'process'`), next to the thread
// tier where both apply:
//   (i)   binding round trip: `await tools.noop({})` sequentially (per call, target p50 ≤ 25 µs) and
//         100 concurrent calls at a time in one run, in both containments;
//   (ii)  idle RSS of each spare sandbox process (VmRSS summed over the sandbox helper and what it
//         runs), found as descendants of this Node process in /proc;
//   (iii) time to replace a killed sandbox process: SIGKILL an idle one (its deepest descendant, the
//         program process, or the top one, the helper) and time the next `return 1`, against a
//         normal `return 1`;
//   (iv)  from a budget's end to the run's result for a built-in that never checks for termination:
//         `Array.prototype.join.call({ length: 2 ** 28 })` under computeMs 300 / maxWallMs 2000
//         (result time minus 300 ms, target < 100 ms). Timed in a child Node that is killed when it
//         does not end: on threads the program cannot be contained.
// Which tier ran is taken from runtime.sandbox?.process; without the process tier the `containment`
// key is ignored and the process-only sections say so.
// Usage: node bench/isolate-process-tier.mjs [calls=10000]
import { spawnSync } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { rssBytes, sandboxRoots, waitFor } from '../__test__/process-helpers.mjs'
import { ms, p50, p99, us } from './stats.mjs'

const CALLS = Number(process.argv[2] ?? 10000)
const KILL_TRIALS = 10
const BUDGET_TRIALS = 5
const BUDGET_CHILD_TIMEOUT_MS = 20000
const MiB = 1024 * 1024

async function load(config) {
  const ctx = new Context()
  const fiber = await ctx.plugin(IsolateCodeRuntime, config)
  const runtime = ctx.codeRuntime
  return { runtime, fiber, inProcess: runtime.sandbox?.process === true }
}

const tierLabel = (containment, inProcess) =>
  inProcess ? `${containment}: sandbox process` : `${containment}: host thread${containment === 'process' ? ' (no process tier)' : ''}`

const returnOne = (runtime) => runtime.run({ program: 'return 1', bindings: [] })

async function timedReturnOne(runtime) {
  const start = performance.now()
  const result = await returnOne(runtime)
  return { ms: performance.now() - start, result }
}

// (i) Binding round trip -------------------------------------------------------------------------

const noop = [{ global: 'tools', functions: { noop: async () => null } }]
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
  for (let batch = 0; batch < ${Math.max(1, CALLS / 100)}; batch++) {
    const t = performance.now()
    await Promise.all(Array.from({ length: 100 }, () => tools.noop({})))
    times.push(performance.now() - t)
  }
  return { times, total: performance.now() - start }`

async function roundTrip(containment) {
  const { runtime, fiber, inProcess } = await load({ containment })
  const label = tierLabel(containment, inProcess)
  for (const [name, program, perSample] of [['sequential', sequential, 1], ['100 concurrent, amortised', concurrent, 100]]) {
    const r = await runtime.run({ program, bindings: noop })
    if (r.error) {
      console.log(`  ${label.padEnd(40)} ${name}: ${JSON.stringify(r.error)}`)
      continue
    }
    const { times, total } = r.value
    const perSecond = (CALLS / total) * 1000
    const median = p50(times) / perSample
    const target = perSample === 1 ? `   (target p50 ≤ 25 µs: ${median * 1000 <= 25 ? 'met' : 'not met'})` : ''
    console.log(
      `  ${label.padEnd(40)} ${name.padEnd(26)} p50 ${us(median).padStart(9)}   p99 ${us(p99(times) / perSample).padStart(9)}   ${Math.round(perSecond).toLocaleString('en')} calls/s${target}`,
    )
  }
  await fiber.dispose()
}

console.log(`(i) binding round trip, ${CALLS} calls per run`)
await roundTrip('process')
await roundTrip('thread')

// (ii) and (iii): the sandbox processes of one runtime --------------------------------------------

const treeRss = (root) => root.tree.reduce((sum, pid) => sum + rssBytes(pid), 0)
let processTierActive = false

{
  const { runtime, fiber, inProcess } = await load({ containment: 'process' })
  processTierActive = inProcess
  await returnOne(runtime)
  console.log(`(ii) idle RSS per spare sandbox process (${tierLabel('process', inProcess)})`)
  if (!inProcess) {
    console.log('  not applicable: runs are on host threads, there are no sandbox processes')
  } else {
    // Spares are booted in the background: wait until the count stops changing.
    let count = -1
    await waitFor(() => {
      const now = sandboxRoots().length
      const settled = now === count && now > 0
      count = now
      return settled
    }, 5000)
    const roots = sandboxRoots()
    const sizes = roots.map(treeRss)
    for (const [k, root] of roots.entries()) {
      console.log(`  pid ${String(root.pid).padStart(7)}  ${root.tree.length} process(es)  VmRSS ${(sizes[k] / MiB).toFixed(1)} MiB`)
    }
    if (roots.length === 0) console.log('  no sandbox process found below this Node process')
    else console.log(`  ${roots.length} sandbox process(es), mean ${(sizes.reduce((a, b) => a + b, 0) / roots.length / MiB).toFixed(1)} MiB each`)
  }
  console.log(`  host RSS ${(process.memoryUsage().rss / MiB).toFixed(1)} MiB`)

  console.log(`(iii) replacing a killed sandbox process, ${KILL_TRIALS} trials per victim`)
  if (!inProcess) {
    console.log('  not applicable: runs are on host threads, there is no sandbox process to kill')
  } else {
    const normal = []
    for (let k = 0; k < KILL_TRIALS; k++) normal.push((await timedReturnOne(runtime)).ms)
    console.log(`  normal return 1                         p50 ${ms(p50(normal)).padStart(10)}   max ${ms(Math.max(...normal)).padStart(10)}`)
    for (const victim of ['deepest (program process)', 'top (sandbox helper)']) {
      const after = []
      const odd = []
      for (let k = 0; k < KILL_TRIALS; k++) {
        const before = await waitFor(() => (sandboxRoots().length > 0 ? sandboxRoots() : null), 5000)
        if (!before) break
        const count = before.length
        const root = before[0]
        let pid = root.pid
        if (victim.startsWith('deepest')) {
          // The last pid of the tree is the most recently found, deepest descendant.
          const all = sandboxRoots().find((r) => r.pid === root.pid)?.tree ?? [root.pid]
          pid = all[all.length - 1]
        }
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          continue
        }
        const { ms: took, result } = await timedReturnOne(runtime)
        after.push(took)
        if (result.value !== 1) odd.push(result)
        // Let the pool refill before the next trial.
        await waitFor(() => sandboxRoots().length >= count, 5000)
      }
      if (after.length === 0) {
        console.log(`  kill ${victim}: no sandbox process to kill`)
        continue
      }
      console.log(
        `  next return 1 after killing ${victim.padEnd(26)} p50 ${ms(p50(after)).padStart(10)}   max ${ms(Math.max(...after)).padStart(10)}   (${(p50(after) / p50(normal)).toFixed(1)}× normal)`,
      )
      if (odd.length > 0) console.log(`    ${odd.length} of those runs did not return 1, e.g. ${JSON.stringify(odd[0])}`)
    }
  }
  await fiber.dispose()
}

// (iv) Budget end to result, uninterruptible built-in ---------------------------------------------

const BUDGET_PROGRAM = 'Array.prototype.join.call({ length: 2 ** 28 })'

/** Runs the budget trials for one containment in a child Node; `{ inProcess, trials }` or `{ hung }`. */
function budgetTrials(containment) {
  const index = pathToFileURL(fileURLToPath(new URL('../lib/index.mjs', import.meta.url))).href
  const source = `
    import { Context } from 'cordis'
    import { IsolateCodeRuntime } from ${JSON.stringify(index)}
    const ctx = new Context()
    await ctx.plugin(IsolateCodeRuntime, { containment: ${JSON.stringify(containment)}, computeMs: 300, maxWallMs: 2000 })
    const runtime = ctx.codeRuntime
    const report = { inProcess: runtime.sandbox?.process === true, trials: [] }
    // Written after each trial, so a child killed later still reports what it measured.
    const flush = () => process.stdout.write(JSON.stringify(report) + '\\n')
    flush()
    for (let i = 0; i < ${BUDGET_TRIALS}; i++) {
      let stats
      const start = performance.now()
      const result = await runtime.run({ program: ${JSON.stringify(BUDGET_PROGRAM)}, bindings: [], onStats: (s) => (stats = s) })
      report.trials.push({ ms: performance.now() - start, cpuMs: stats?.cpuMs, error: result.error, value: result.value })
      flush()
    }
    process.exit(0)`
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', source], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    encoding: 'utf8',
    timeout: BUDGET_CHILD_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  })
  const lines = out.stdout.trim().split('\n').filter(Boolean)
  let report = { inProcess: containment === 'process' ? undefined : false, trials: [] }
  try {
    if (lines.length > 0) report = JSON.parse(lines[lines.length - 1])
  } catch {}
  return { ...report, killed: out.signal === 'SIGKILL', stderr: out.stderr.trim() }
}

console.log(`(iv) budget end to result: \`${BUDGET_PROGRAM}\`, computeMs 300, maxWallMs 2000 (target < 100 ms past 300 ms)`)
for (const containment of ['process', 'thread']) {
  if (containment === 'process' && !processTierActive) {
    console.log(`  ${tierLabel('process', false).padEnd(40)} skipped: the 'process' key is ignored here, the thread row below is what it would measure`)
    continue
  }
  const report = budgetTrials(containment)
  const label = tierLabel(containment, report.inProcess)
  const ended = report.trials.filter((t) => t.error || 'value' in t)
  if (ended.length > 0) {
    const late = ended.map((t) => t.ms - 300)
    const kinds = [...new Set(ended.map((t) => (t.error ? `${t.error.kind}: ${t.error.message}` : `value (${typeof t.value})`)))]
    console.log(
      `  ${label.padEnd(40)} result − 300 ms  p50 ${ms(p50(late)).padStart(10)}   max ${ms(Math.max(...late)).padStart(10)}   over ${ended.length} run(s); ${kinds.join('; ')}${p50(late) < 100 ? '' : '   (target not met)'}`,
    )
  }
  if (report.killed) {
    console.log(
      `  ${label.padEnd(40)} not containable in thread mode${report.inProcess ? ' (?? the process tier was active)' : ''}: a run did not end within ${BUDGET_CHILD_TIMEOUT_MS / 1000} s of starting; its child Node was killed after ${ended.length} finished run(s)`,
    )
  } else if (ended.length === 0) {
    console.log(`  ${label.padEnd(40)} the child ended without a result: ${report.stderr.split('\n').slice(-3).join(' | ')}`)
  }
}
