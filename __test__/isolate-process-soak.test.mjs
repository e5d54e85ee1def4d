// Soak of the isolate process tier: 5000 runs of mixed programs (return, throw, compute timeouts,
// small heap bombs, a V8 fatal error every 100th run, binding calls), 8 at a time, then dispose.
// The host's threads, open fds and RSS must be flat between the end of the warm-up and the end,
// and no sandbox process or cgroup of this host may be left once dispose resolved.
import { describe, expect, it } from 'vitest'
import { loadIsolate, threadCount, tools } from './helpers.mjs'
import { openFds, ownCgroups, sandboxProcesses } from './process-helpers.mjs'

const RUNS = 5000
const WARMUP = 500
const CONCURRENCY = 8
const COMPUTE_MS = 50
const HEAP_MB = 8

/** The compute budget's end, stopped in the program's first line (docs/tracing.md#the-timeouts-clause). */
const timeout = {
  kind: 'timeout',
  message: expect.stringMatching(new RegExp(`^compute budget exhausted \\(${COMPUTE_MS}ms busy\\)( at program\\.ts:1:\\d+)?$`)),
}
const heapLimit = { kind: 'worker-exit', message: `isolate heap limit reached (${HEAP_MB} MiB)` }

/** The i-th program of the mix and a check of its result. */
function mix(i) {
  if (i % 100 === 50) {
    // A V8 fatal error: the sandbox process dies. Under a 50 ms budget it may be the budget that
    // ends the run first; the hostile suite pins the fatal result itself.
    return {
      program: "console.log('fatal'); Array.prototype.sort.call({ length: 2 ** 32 - 1 })",
      check: (r) => {
        expect(r.logs).toEqual(['fatal'])
        if (r.error?.kind === 'timeout') expect(r.error).toEqual(timeout)
        else expect([r.error?.kind, r.error?.message]).toEqual(['worker-exit', expect.stringMatching(/isolate/)])
      },
    }
  }
  switch (i % 20) {
    case 0:
      return { program: 'for (;;) {}', check: (r) => expect(r).toEqual({ logs: [], error: { kind: 'timeout', message: `compute budget exhausted (${COMPUTE_MS}ms busy) at program.ts:1:1` } }) }
    case 1:
      return {
        program: 'const a = []; for (;;) a.push(new Array(1e5))',
        // The first terminal event wins: on a loaded machine the 50 ms budget can end it first
        // (its garbage collections count as the program's time).
        check: (r) => expect([heapLimit, timeout]).toContainEqual(r.error) && expect(r.logs).toEqual([]),
      }
    case 2:
    case 3: {
      const program = `console.log('t${i}'); throw new Error('boom')`
      const at = `program.ts:1:${program.indexOf('new') + 1}`
      return { program, check: (r) => expect(r).toEqual({ logs: [`t${i}`], error: { kind: 'exception', message: `Error: boom\n    at ${at}` } }) }
    }
    case 4:
    case 5:
    case 6:
    case 7:
      return {
        program: `let s = 0; for (let k = 0; k < 5; k++) s += await tools.double({ n: k + ${i} }); return s`,
        binding: true,
        check: (r) => expect(r).toEqual({ logs: [], value: 2 * (5 * i + 10) }),
      }
    default:
      return { program: 'return 1', check: (r) => expect(r).toEqual({ logs: [], value: 1 }) }
  }
}

/** Runs programs `from` .. `to - 1` of the mix, `CONCURRENCY` at a time. */
async function runMix(runtime, namespace, from, to) {
  let next = from
  const lane = async () => {
    while (next < to) {
      const i = next++
      const { program, binding, check } = mix(i)
      const result = await runtime.run({ program, bindings: binding ? [namespace] : [] })
      try {
        check(result)
      } catch (error) {
        error.message = `run ${i} (${program}): ${error.message}`
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, lane))
}

/** What persists once the runs drained: the lowest thread and fd counts over half a second, and RSS. */
async function quiescent() {
  let threads = Infinity
  let fds = Infinity
  for (let k = 0; k < 10; k++) {
    await new Promise((r) => setTimeout(r, 50))
    threads = Math.min(threads, await threadCount())
    fds = Math.min(fds, openFds())
  }
  return { threads, fds, rss: process.memoryUsage().rss }
}

describe('soak', () => {
  it(`${RUNS} mixed runs, ${CONCURRENCY} at a time, leave the host flat and no sandbox process behind`, async () => {
    const { runtime, fiber } = await loadIsolate({ containment: 'process', computeMs: COMPUTE_MS, maxOldGenerationSizeMb: HEAP_MB })
    try {
      // The mix includes V8 fatal errors, which abort a host that runs isolates on its own threads.
      expect(runtime.sandbox?.process, 'runs must be in sandbox processes: in thread mode this mix crashes the host').toBe(true)
    } catch (error) {
      await fiber.dispose()
      throw error
    }
    const { namespace } = tools()
    const start = performance.now()
    await runMix(runtime, namespace, 0, WARMUP)
    const warm = await quiescent()
    await runMix(runtime, namespace, WARMUP, RUNS)
    const end = await quiescent()
    expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({ logs: [], value: 1 })
    await fiber.dispose()
    const elapsed = performance.now() - start
    expect(sandboxProcesses()).toEqual([])
    // Each run's process had cgroups of its own where the host could make them: all removed.
    expect(ownCgroups()).toEqual([])
    expect(end.threads).toBeLessThanOrEqual(warm.threads + 4)
    expect(end.fds).toBeLessThanOrEqual(warm.fds + 8)
    expect(end.rss - warm.rss).toBeLessThan(128 * 1024 * 1024)
    expect(elapsed).toBeLessThan(540_000)
  }, 600_000)
})
