// The same facts in both tiers: logs reach onLog in program order relative to binding calls, a
// sandbox process V8's fatal path ended reports the CPU it used, and a host whose runtimes are
// all disposed holds no descriptor or thread of ours (docs/seam.md#observers,
// docs/budgets-and-ledger.md#the-hosts-memory).
import { spawnSync } from 'node:child_process'
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { PYTHON, REPO, TOOLS, URLS } from './python-helpers.mjs'
import native from '../lib/native.mjs'

for (const containment of ['process', 'thread']) {
  describe(`containment '${containment}'`, () => {
    let ctx
    let runtime
    beforeAll(async () => {
      ctx = new Context()
      await ctx.plugin(IsolateCodeRuntime, { containment })
      runtime = ctx.codeRuntime
    })
    afterAll(() => ctx?.registry.delete(IsolateCodeRuntime))

    it('onLog hears each line before the binding call the program made after it', async () => {
      const order = []
      const bindings = [TOOLS({ mark: async (x) => (order.push(`call ${x}`), x) })]
      const program = [
        "console.log('a')",
        'await tools.mark(1)',
        "console.log('b'); console.log('c')",
        'tools.mark(2)',
        "console.log('d')",
        'await tools.mark(3)',
      ].join('\n')
      const result = await runtime.run({ program, bindings, onLog: (line) => order.push(`log ${line}`) })
      expect(result).toEqual({ logs: ['a', 'b', 'c', 'd'] })
      expect(order).toEqual(['log a', 'call 1', 'log b', 'log c', 'call 2', 'log d', 'call 3'])
    })
  })
}

describe.runIf(native.containedIsolatesAvailable())('a sandbox process V8 ended', () => {
  it('reports the CPU it used before the fatal error, not 0', async () => {
    const ctx = new Context()
    await ctx.plugin(IsolateCodeRuntime, { containment: 'process' })
    let stats
    const program = "const t = Date.now(); while (Date.now() - t < 400) {}; 'x'.repeat(2 ** 27 + 1000).split('')"
    const result = await ctx.codeRuntime.run({ program, bindings: [], onStats: (s) => (stats = s) })
    ctx.registry.delete(IsolateCodeRuntime)
    expect(result.error.message).toMatch(/^isolate process exited \(code=null, signal=SIGTRAP\)/)
    // 400 ms of wall time spinning; on a shared machine the process gets at least a share of it.
    expect(stats.cpuMs).toBeGreaterThan(50)
  })
})

describe('after every runtime is disposed', () => {
  let dir
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'crn-tier-facts-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  // A fresh host process: what it holds before its first runtime, and after each was disposed.
  const host = (containments) => `
import fs from 'node:fs'
import { Context } from ${JSON.stringify(URLS.cordis)}
import { IsolateCodeRuntime, PythonCodeRuntime } from ${JSON.stringify(URLS.index)}
const fds = () => new Set(fs.readdirSync('/proc/self/fd').map((fd) => { try { return fd + ' ' + fs.readlinkSync('/proc/self/fd/' + fd) } catch { return fd } }))
const threads = () => fs.readdirSync('/proc/self/task').map((t) => { try { return fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim() } catch { return '' } })
const fdsBefore = fds()
const threadsBefore = threads()
for (const containment of ${JSON.stringify(containments)}) {
  const ctx = new Context()
  const python = containment === 'python'
  const fiber = await ctx.plugin(python ? PythonCodeRuntime : IsolateCodeRuntime, python ? { pythonBin: ${JSON.stringify(PYTHON)} } : { containment })
  const runtime = ctx.get('codeRuntime')
  const results = await Promise.all([1, 2, 3].map((n) => runtime.run({ program: 'return ' + n, bindings: [] })))
  if (results.some((r, i) => r.value !== i + 1)) throw new Error(JSON.stringify(results))
  await fiber.dispose()
}
// The watchdog's thread leaves a second after its last run.
await new Promise((r) => setTimeout(r, 1500))
const fdsAfter = [...fds()].filter((fd) => !fdsBefore.has(fd))
const threadsAfter = threads()
const newThreads = threadsAfter.filter((t) => threadsAfter.filter((u) => u === t).length > threadsBefore.filter((u) => u === t).length)
console.log(JSON.stringify({ fds: fdsAfter, threads: [...new Set(newThreads)] }))
`

  function measure(containments) {
    const file = path.join(dir, `host-${containments.join('-')}.mjs`)
    writeFileSync(file, host(containments))
    const out = spawnSync(process.execPath, [file], { encoding: 'utf8', cwd: REPO, timeout: 60_000 })
    try {
      return JSON.parse(out.stdout)
    } catch {
      throw new Error(`host exited ${out.status}: ${out.stderr}`)
    }
  }

  it.runIf(native.containedIsolatesAvailable())('sandbox processes and Python: no descriptor and no thread is left', () => {
    expect(measure(['process', 'python'])).toEqual({ fds: [], threads: [] })
  })

  it('thread tier: only V8\'s own platform workers stay (V8 cannot be shut down and started again in one process)', () => {
    const left = measure(['thread'])
    expect(left.fds).toEqual([])
    expect(left.threads.filter((t) => !t.startsWith('V8 '))).toEqual([])
  })
})
