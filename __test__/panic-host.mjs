// A host process for __test__/host-panic.test.mjs: started with CODE_RUNTIME_NATIVE_TEST_PANIC
// naming the site that panics once (src/panic/switch.rs), it runs one program that passes that
// site, then more programs, sequential and concurrent, and prints every result as one JSON line.
// A panic that reached a C frame would abort this process instead.
// `node panic-host.mjs <containment>`; `python`: Python runs, each forked from the template.
import { Context } from 'cordis'
import { IsolateCodeRuntime, PythonPtcRuntime } from '../lib/index.mjs'

const containment = process.argv[2]
if (containment === 'python') {
  const ctx = new Context()
  const fiber = await ctx.plugin(PythonPtcRuntime, { timeoutMs: 10_000 })
  const runtime = ctx.ptcRuntime
  const tools = { global: 'tools', functions: { echo: async (x) => x } }
  const program = (i) => `got = await tools.echo(${i})\nprint('run', got)\nreturn got`
  const run = (i) => runtime.run(runtime.resolve({ program: program(i), bindings: [tools] }))
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
const tools = { global: 'tools', functions: { echo: async (x) => x } }
const run = (i) => runtime.run({ program: `const got = await tools.echo(${i}); console.log('run', got); return got`, bindings: [tools] })

// The first run must be read by Node's main thread (the reader site is there): reading the
// sandbox layers waits until the pool's first process is ready, so that run takes it at once on
// the main thread instead of waiting for a process its supervisor then reads alone.
void runtime.sandbox
const first = await run(0)
const after = []
for (let i = 1; i <= 5; i++) after.push(await run(i))
const concurrent = await Promise.all([6, 7, 8, 9].map(run))
const containmentInEffect = runtime.containment
await fiber.dispose()
process.stdout.write(`${JSON.stringify({ containment: containmentInEffect, first, after, concurrent })}\n`)
process.exit(0)
