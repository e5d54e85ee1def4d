// A runtime hosted in a worker_threads Worker rather than on Node's main thread: its runs work
// there, and terminating the Worker mid-run (a program calling bindings, one computing) leaves
// the host process alive and no sandbox process behind. Node asserts that a Worker's loop closes
// with no handle open, so a handle the addon left on it (the process tier reads a run's channel
// on the thread that started the run) would abort the whole host. Each tier runs in a child
// Node, so such an abort fails the test instead of taking the suite's own process down.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import native from '../lib/native.mjs'

vi.setConfig({ testTimeout: 120_000 })
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const ENTRY = fileURLToPath(new URL('../lib/index.mjs', import.meta.url))
const HELPERS = fileURLToPath(new URL('./process-helpers.mjs', import.meta.url))

const WORKER = (containment) => `
  import { Context } from 'cordis'
  import { IsolateCodeRuntime } from ${JSON.stringify(ENTRY)}
  import { parentPort } from 'node:worker_threads'
  const ctx = new Context()
  await ctx.plugin(IsolateCodeRuntime, { containment: ${JSON.stringify(containment)} })
  const tools = [{ global: 'tools', functions: { inc: async (x) => x + 1 } }]
  const done = await ctx.codeRuntime.run({ program: 'let s = 0\\nfor (let i = 0; i < 100; i++) s += await tools.inc(i)\\nreturn s', bindings: tools })
  ctx.codeRuntime.run({ program: 'for (;;) await tools.inc(1)', bindings: tools })
  ctx.codeRuntime.run({ program: 'for (;;) {}', bindings: [] })
  setTimeout(() => parentPort.postMessage(done), 200)`

function hostInChild(containment) {
  const script = `
    import { Worker } from 'node:worker_threads'
    import { sandboxProcesses, waitFor } from ${JSON.stringify(HELPERS)}
    const results = []
    for (let i = 0; i < 3; i++) {
      const worker = new Worker(${JSON.stringify(WORKER(containment))}, { eval: true })
      worker.on('error', (e) => { console.error(e); process.exit(3) })
      results.push(await new Promise((resolve) => worker.once('message', resolve)))
      await worker.terminate()
    }
    const left = (await waitFor(() => sandboxProcesses().length === 0, 10000)) ? 0 : sandboxProcesses().length
    // The runs the Workers left (a program computing, one calling) end with them: no isolate
    // thread or run supervisor of theirs keeps running in the host.
    const { readdirSync, readFileSync } = await import('node:fs')
    const runThreads = () => readdirSync('/proc/self/task').filter((t) => {
      try { return /^code-runtime-(is|su)$/.test(readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim()) } catch { return false }
    }).length
    const threads = (await waitFor(() => runThreads() === 0, 10000)) ? 0 : runThreads()
    console.log(JSON.stringify({ results, left, threads }))`
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 90_000 })
  expect(child.signal, `the host did not end by itself: ${child.stderr}`).toBeNull()
  expect(child.status, child.stderr).toBe(0)
  return JSON.parse(child.stdout)
}

const tiers = native.containedIsolatesAvailable() ? ['thread', 'process'] : ['thread']

describe.each(tiers)('a runtime in a Worker, containment %s', (containment) => {
  it('runs there, and the Worker ending mid-run leaves the host alive with no run thread or sandbox process', () => {
    const { results, left, threads } = hostInChild(containment)
    expect(results).toEqual(Array.from({ length: 3 }, () => ({ logs: [], value: 5050 })))
    expect(left).toBe(0)
    expect(threads).toBe(0)
  })
})
