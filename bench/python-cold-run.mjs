// Cold-run latency of PythonCodeRuntime: `return 1` end to end (a spare child booted behind the
// sandbox for the next run, boot and run frames, done, teardown, the run's namespace reaped)
// against a bare `python3 -I -c pass` spawned from Node. Prints p50/p99 and the ratio (target
// ≤ 1.0×), and on a line of its own the cost of the sandbox's namespaces, Landlock and seccomp per
// spawn (the bare interpreter started through the sandbox helper). Benchmarks print; they assert
// nothing.
//
//   node bench/python-cold-run.mjs [runs=100]
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from 'cordis'
import { PythonCodeRuntime } from '../lib/index.mjs'
import { inTurn } from './stats.mjs'

const RUNS = Number(process.argv[2] ?? 100)
const WARMUP = 5
// The real interpreter behind `python3` on PATH (the runtime spawns this one too:
// docs/python.md#interpreter).
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
    for (const [name, fn] of inTurn(candidates, i)) {
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

// The same bare interpreter, started the way runs are: through the helper, in new namespaces,
// under Landlock and seccomp (the run's plan, minus its staging files).
const helper = fileURLToPath(new URL('../code-runtime-native-sandbox', import.meta.url))
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'crn-bench-'))
const prefixes = execFileSync(real, ['-c', 'import sys; print(sys.prefix); print(sys.base_prefix)'], { encoding: 'utf8' }).trim().split('\n')
const ro = ['/usr', '/lib', '/lib64', '/etc/ld.so.cache', ...prefixes, real].flatMap((p) => ['--ro', p])
const sandboxed = () =>
  new Promise((resolve, reject) => {
    const args = ['exec', '--ns', '--tmpfs', scratch, String(64 << 20), '--proc', ...ro, '--rw', scratch, '--rlimit', 'nproc', '256', '256', '--status', '3', '--', real, '-I', '-c', 'pass']
    const child = spawn(helper, args, { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] })
    child.stdio[3].resume()
    child.on('error', reject)
    child.on('close', resolve)
  })

const { base, ours, viaShim, caged } = await timeAll({ base: bare(real), ours: runtimeRun, viaShim: bare(shim), caged: sandboxed })
fs.rmSync(scratch, { recursive: true, force: true })

console.log(`interpreter: ${real} (PATH has ${shim})`)
console.log(`runs: ${RUNS} (+${WARMUP} warmup)`)
console.log(`bare \`python3 -I -c pass\` (real interpreter): p50 ${fmt(base.p50)}  p99 ${fmt(base.p99)}`)
console.log(`PythonCodeRuntime \`return 1\`:               p50 ${fmt(ours.p50)}  p99 ${fmt(ours.p99)}`)
console.log(`ratio (runtime / bare):                        p50 ${(ours.p50 / base.p50).toFixed(2)}x  p99 ${(ours.p99 / base.p99).toFixed(2)}x  (target <= 1.0x)`)
console.log(`sandbox setup per spawn (namespaces, Landlock, seccomp): p50 ${fmt(caged.p50 - base.p50)} (bare through the helper: p50 ${fmt(caged.p50)}; paid by the spare, off the run's path)`)
console.log(`sandbox layers: ${JSON.stringify(runtime.sandbox)}`)
console.log(`for reference, bare via the PATH shim:         p50 ${fmt(viaShim.p50)}  p99 ${fmt(viaShim.p99)}`)
