// What a Python run costs to start, against a bare `python3 -I -c pass` measured the same way in
// the same process (interleaved, so load affects both alike): the targets of issue 27 ("one
// sandbox-process tier for both languages"), printed as measured and as ratios to bare.
//
// - `return 1` paced (one run, then a pause) and back to back (runs of one runtime in a row):
//   p50 and p99;
// - 64 concurrent runs against 64 concurrent bare interpreters: wall time;
// - a run under a file policy (read-only over a temporary workspace) against one without;
// - the idle cost of a Python runtime: PSS of every process it keeps (its template, its spare
//   child, the keeper and init), read from /proc/<pid>/smaps_rollup: a runtime that has run no
//   file-policy run (one spare), and the timed one, which keeps a policy run's spare too;
// - `spawned`: a second runtime whose interpreter (a wrapper script that execs the real one)
//   refuses to be a template, so each of its runs spawns an interpreter through the helper as
//   before the template existed (the wrapper's own `sh` adds about a millisecond per spawn).
//
// Benchmarks print; they assert nothing.
//
//   node bench/python-start.mjs [runs=60] [--load]   (--load: one busy core in the background)
import { execFileSync, fork, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Context } from 'cordis'
import { PythonPtcRuntime } from '../lib/index.mjs'
import { inTurn, takeTurns } from './stats.mjs'

const args = process.argv.slice(2)
const RUNS = Number(args.find((a) => /^\d+$/.test(a)) ?? 60)
const LOADED = args.includes('--load')
const WARMUP = 5
const PACE_MS = 100
const CONCURRENT = 64
const real = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]
}
const ms = (x) => `${x.toFixed(2)} ms`
const now = () => Number(process.hrtime.bigint()) / 1e6

const bare = () =>
  new Promise((resolve, reject) => {
    const child = spawn(real, ['-I', '-c', 'pass'], { stdio: 'ignore' })
    child.on('error', reject)
    child.on('close', resolve)
  })

// One busy core, in its own process, for hosts that are shared.
const load = LOADED ? fork(new URL(import.meta.url), ['--spin'], { stdio: 'ignore' }) : undefined
if (args.includes('--spin')) for (;;);

const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'crn-bench-ws-')))
const ctx = new Context()
const fiber = await ctx.plugin(PythonPtcRuntime, { timeoutMs: 30_000 })
const runtime = ctx.ptcRuntime
const wrapper = path.join(workspace, 'python-no-template')
fs.writeFileSync(wrapper, `#!/bin/sh\ncase "$3" in */template.py) exit 3;; esac\nexec ${real} "$@"\n`, { mode: 0o755 })
const spawnCtx = new Context()
const spawnFiber = await spawnCtx.plugin(PythonPtcRuntime, { timeoutMs: 30_000, pythonBin: wrapper })
const runOn = (rt) => async (policy) => {
  const request = { program: 'return 1', bindings: [] }
  if (policy) request.sandboxPolicy = { mode: 'read-only', workspaceRoot: workspace }
  const r = await rt.run(rt.resolve(request))
  if (r.value !== 1) throw new Error(`unexpected result ${JSON.stringify(r)}`)
}
const run = runOn(runtime)
const spawned = runOn(spawnCtx.ptcRuntime)

/** p50 and p99 of each candidate, the candidates taking turns (`takeTurns`, bench/stats.mjs):
 * paced `PACE_MS` apart, or back to back in blocks of runs of one candidate. */
async function timeAll(candidates, pace) {
  for (const fn of Object.values(candidates)) for (let i = 0; i < WARMUP; i++) await fn()
  const samples = await takeTurns(candidates, { runs: RUNS, paceMs: pace ? PACE_MS : 0 })
  return Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, { p50: percentile(xs, 50), p99: percentile(xs, 99) }]))
}

/** Wall time of `n` of `fn` at once, the median of five rounds alternating with the other. */
async function burst(candidates, n) {
  const walls = Object.fromEntries(Object.keys(candidates).map((k) => [k, []]))
  for (let round = 0; round < 5; round++) {
    for (const [name, fn] of inTurn(candidates, round)) {
      await sleep(200)
      const t = now()
      await Promise.all(Array.from({ length: n }, () => fn()))
      walls[name].push(now() - t)
    }
  }
  return Object.fromEntries(Object.entries(walls).map(([k, xs]) => [k, percentile(xs, 50)]))
}

/** The process ids below `pid` (children first found through /proc/<pid>/task/*\/children). */
function descendants(pid) {
  const out = []
  const visit = (p) => {
    for (const task of fs.readdirSync(`/proc/${p}/task`)) {
      let children = ''
      try {
        children = fs.readFileSync(`/proc/${p}/task/${task}/children`, 'utf8')
      } catch {}
      for (const child of children.split(' ').filter(Boolean)) {
        out.push(Number(child))
        visit(child)
      }
    }
  }
  visit(pid)
  return out
}

function pssKiB(pid) {
  try {
    const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0)
  } catch {
    return 0
  }
}

const paced = await timeAll({ bare, ours: () => run(false), spawned: () => spawned(false) }, true)
const backToBack = await timeAll({ bare, ours: () => run(false), spawned: () => spawned(false), policy: () => run(true) }, false)
const walls = await burst({ bare, ours: () => run(false), spawned: () => spawned(false) }, CONCURRENT)
await spawnFiber.dispose()
await sleep(1500)
const kept = descendants(process.pid).filter((pid) => pid !== load?.pid)
const idlePss = kept.reduce((sum, pid) => sum + pssKiB(pid), 0)
// A runtime that has run no file-policy run keeps its template and one spare (measured alone:
// processes that map the same files share their pages' PSS).
await fiber.dispose()
await sleep(500)
const plainCtx = new Context()
const plainFiber = await plainCtx.plugin(PythonPtcRuntime, { timeoutMs: 30_000 })
await runOn(plainCtx.ptcRuntime)(false)
await sleep(1500)
const plainKept = descendants(process.pid).filter((pid) => pid !== load?.pid)
const plainPss = plainKept.reduce((sum, pid) => sum + pssKiB(pid), 0)
await plainFiber.dispose()

const ratio = (ours, base) => `${(ours / base).toFixed(2)}x bare`
console.log(`interpreter: ${real}; runs: ${RUNS} (+${WARMUP} warmup)${LOADED ? '; one busy core in the background' : ''}`)
console.log(`sandbox layers: ${JSON.stringify(runtime.sandbox)}`)
const vsSpawned = (ours, theirs) => `${(ours / theirs).toFixed(2)}x spawned`
console.log(`return 1, paced (${PACE_MS} ms apart): ours p50 ${ms(paced.ours.p50)} p99 ${ms(paced.ours.p99)}; spawned p50 ${ms(paced.spawned.p50)} p99 ${ms(paced.spawned.p99)}; bare p50 ${ms(paced.bare.p50)} p99 ${ms(paced.bare.p99)}; p50 ${ratio(paced.ours.p50, paced.bare.p50)}, ${vsSpawned(paced.ours.p50, paced.spawned.p50)} (target <= 3 ms, <= 0.06x)`)
console.log(`return 1, back to back: ours p50 ${ms(backToBack.ours.p50)} p99 ${ms(backToBack.ours.p99)}; spawned p50 ${ms(backToBack.spawned.p50)} p99 ${ms(backToBack.spawned.p99)}; bare p50 ${ms(backToBack.bare.p50)} p99 ${ms(backToBack.bare.p99)}; p50 ${ratio(backToBack.ours.p50, backToBack.bare.p50)}, ${vsSpawned(backToBack.ours.p50, backToBack.spawned.p50)} (target <= 6 ms, <= 0.12x; p99 <= 15 ms)`)
console.log(`${CONCURRENT} at once, wall: ours ${ms(walls.ours)}; spawned ${ms(walls.spawned)}; bare ${ms(walls.bare)}; ours ${(walls.bare / walls.ours).toFixed(2)}x faster than bare, ${(walls.spawned / walls.ours).toFixed(2)}x faster than spawned (target >= 5x)`)
console.log(`a file policy (read-only) costs p50 ${ms(backToBack.policy.p50 - backToBack.ours.p50)} more (p50 ${ms(backToBack.policy.p50)}; target <= 2 ms more)`)
console.log(`idle runtime: ${(plainPss / 1024).toFixed(1)} MiB PSS in ${plainKept.length} processes (the template and one spare); ${(idlePss / 1024).toFixed(1)} MiB in ${kept.length} once a file-policy run left its spare too (target <= 25 MiB)`)

load?.kill('SIGKILL')
fs.rmSync(workspace, { recursive: true, force: true })
process.exit(0)
