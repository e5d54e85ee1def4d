// Nothing grows with the number of runs (docs/sandbox.md#host-safety): a real soak per isolate tier
// (bench/soak.mjs in a host process of its own, with a binding call in every run), the host's
// JavaScript heap after a forced GC sampled as it goes; its growth per run, the least-squares
// slope over the samples after the warm-up, stays within measurement noise. Before, each
// contained run left its session, closures and run object reachable (about 1.5 KB a run: a
// strong native reference to its onEvent, which reached the object owning it).
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const REPO = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
/** Bytes per run the slope may show: noise of sampling a heap that holds no run (was ~1500). */
const NOISE = 200

function soak(runs, name) {
  const child = spawn(process.execPath, ['--expose-gc', path.join(REPO, 'bench', 'soak.mjs'), String(runs), name, '--json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`soak exited ${code}: ${stderr}`)))),
  )
}

// Python's runs are child processes: too few fit a test for a slope above the noise, so its soak
// is the benchmark's alone (bench/soak.mjs python-call).
describe.each([
  ['process-call', 4000],
  ['thread-call', 3000],
  ['thread-modules', 2000],
])('%s', (name, runs) => {
  it(`${runs} runs leave the host's heap after GC flat`, async () => {
    const r = await soak(runs, name)
    expect(r.case).toBe(name)
    expect(Math.abs(r.heapPerRun), `heap grew ${r.heapGrowth} bytes over the sampled runs`).toBeLessThan(NOISE)
  }, 300_000)
})
