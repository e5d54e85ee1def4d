// A host process for __test__/host-panic.test.mjs: started with CODE_RUNTIME_NATIVE_TEST_PANIC
// naming the site that panics once (src/panic/switch.rs), it runs one program that passes that
// site, then more programs, sequential and concurrent, and prints every result as one JSON line.
// A panic that reached a C frame would abort this process instead.
// `node panic-host.mjs <containment>`; `python`: Python runs, each forked from the template;
// `python-stray`: the same, each writing its line to stdout itself with its logs streamed, so the
// run's own thread reads the line and hands it to Node's main thread (a `Flush`).
import { Context } from 'cordis'
import { IsolateCodeRuntime, PythonCodeRuntime, PythonPtcRuntime } from '../lib/index.mjs'

const containment = process.argv[2]
if (containment === 'python' || containment === 'python-stray') {
  const ctx = new Context()
  const tools = { global: 'tools', functions: { echo: async (x) => x } }
  let fiber, run
  if (containment === 'python') {
    fiber = await ctx.plugin(PythonPtcRuntime, { timeoutMs: 10_000 })
    const runtime = ctx.ptcRuntime
    // The pause lets Node's main thread take the reading of fd 3 over before the run's first
    // frame (on a busy machine a run this short could otherwise end before it read any).
    const program = (i) => `import time\ntime.sleep(0.1)\ngot = await tools.echo(${i})\nprint('run', got)\nreturn got`
    run = (i) => runtime.run(runtime.resolve({ program: program(i), bindings: [tools] }))
  } else {
    fiber = await ctx.plugin(PythonCodeRuntime, {})
    const runtime = ctx.get('codeRuntime')
    // The first call makes Node's main thread read fd 3 (from then on, the run's events wait in
    // its queue for a Flush); the pause lets the run's thread read the line and hand it over; the
    // call after it waits until Node's main thread has delivered that (or failed to), so the run
    // is still undecided.
    const program = (i) =>
      `import os, time\nawait tools.echo(${i})\nos.write(1, b'run ${i}\\n')\ntime.sleep(0.2)\nreturn await tools.echo(${i})`
    run = (i) => runtime.run({ program: program(i), bindings: [tools], onLog: () => {} })
  }
  const first = await run(0)
  const after = []
  for (let i = 1; i <= 2; i++) after.push(await run(i))
  const concurrent = await Promise.all([3, 4].map(run))
  await fiber.dispose()
  process.stdout.write(`${JSON.stringify({ containment, first, after, concurrent })}\n`)
  process.exit(0)
}
const ctx = new Context()
// One sandbox process at most: a panic that lost the pool's count of its process would leave no
// room for the next run's.
const fiber = await ctx.plugin(IsolateCodeRuntime, { containment, computeMs: 5000, maxWallMs: 10000, maxProcesses: 1 })
const runtime = ctx.get('codeRuntime')
// `hold` keeps a run undecided for a while: Node's main thread delivers a run's healthy end
// itself, so on a busy machine a run this short could end before its supervisor's thread first
// ran (and passed its site).
const tools = {
  global: 'tools',
  functions: { echo: async (x) => x, hold: (ms) => new Promise((resolve) => setTimeout(() => resolve(ms), ms)) },
}
const program = (i, hold) => `${hold ? `await tools.hold(${hold}); ` : ''}const got = await tools.echo(${i}); console.log('run', got); return got`
const run = (i, hold = 0) => runtime.run({ program: program(i, hold), bindings: [tools] })

// The first run must be read by Node's main thread (the reader site is there): reading the
// sandbox layers waits until the pool's first process is ready, so that run takes it at once on
// the main thread instead of waiting for a process its supervisor then reads alone.
void runtime.sandbox
const first = await run(0, containment === 'process' ? 300 : 0)
const after = []
for (let i = 1; i <= 5; i++) after.push(await run(i))
const concurrent = await Promise.all([6, 7, 8, 9].map((i) => run(i)))
const containmentInEffect = runtime.containment
await fiber.dispose()
process.stdout.write(`${JSON.stringify({ containment: containmentInEffect, first, after, concurrent })}\n`)
process.exit(0)
