// Containment latency: how far past computeMs a hot loop runs (thread CPU time, the budget's own
// clock), how fast an abort resolves, and how fast dispose ends 10 hot-looping runs.
// Usage: node bench/containment.mjs [runs=20]
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { ms, p50 } from './stats.mjs'

const RUNS = Number(process.argv[2] ?? 20)
const COMPUTE_MS = 300

async function load(config) {
  const ctx = new Context()
  const fiber = await ctx.plugin(IsolateCodeRuntime, config)
  return { runtime: ctx.codeRuntime, fiber }
}

// 1. Compute-budget overshoot: cpuMs at the stop minus computeMs.
{
  const { runtime, fiber } = await load({ computeMs: COMPUTE_MS })
  const overshoot = []
  for (let i = 0; i < RUNS; i++) {
    let stats
    const result = await runtime.run({ program: 'for (;;) {}', bindings: [], onStats: (s) => (stats = s) })
    if (result.error?.kind !== 'timeout') throw new Error(JSON.stringify(result))
    overshoot.push(stats.cpuMs - COMPUTE_MS)
  }
  console.log(`compute overshoot past ${COMPUTE_MS} ms   p50 ${ms(p50(overshoot))}   max ${ms(Math.max(...overshoot))}   (target ≤ 5 ms)`)
  await fiber.dispose()
}

// 2. Abort latency: signal → resolved result, for a hot loop.
{
  const { runtime, fiber } = await load()
  const latency = []
  for (let i = 0; i < RUNS; i++) {
    const controller = new AbortController()
    const running = runtime.run({ program: 'for (;;) {}', bindings: [], signal: controller.signal })
    await new Promise((r) => setTimeout(r, 50))
    const start = performance.now()
    controller.abort('stop')
    const result = await running
    latency.push(performance.now() - start)
    if (result.error?.kind !== 'abort') throw new Error(JSON.stringify(result))
  }
  console.log(`abort latency (hot loop)        p50 ${ms(p50(latency))}   max ${ms(Math.max(...latency))}`)
  await fiber.dispose()
}

// 3. Dispose latency with 10 hot-looping runs: fiber.dispose() until every thread is joined.
{
  const latency = []
  for (let i = 0; i < Math.max(3, RUNS / 4); i++) {
    const { runtime, fiber } = await load()
    const runs = Array.from({ length: 10 }, () => runtime.run({ program: 'for (;;) {}', bindings: [] }))
    await new Promise((r) => setTimeout(r, 100))
    const start = performance.now()
    await fiber.dispose()
    latency.push(performance.now() - start)
    const results = await Promise.all(runs)
    if (!results.every((r) => r.error?.message === 'runtime disposed')) throw new Error('not disposed')
  }
  console.log(`dispose latency (10 hot loops)  p50 ${ms(p50(latency))}   max ${ms(Math.max(...latency))}`)
}
