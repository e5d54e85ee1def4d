// `maxMessageBytes`, the host's own config key with its meaning: the largest binding call's
// arguments or binding reply, in bytes of JSON, and the cap of the arguments of the calls in
// flight together. Past it the run ends as `protocol`, as the host's Node backend ends it, in
// every backend; a program cannot make the host hold more than that of its calls' arguments.
// Also here: the sandbox facts of a run that never started (no enforcement, as the host's
// backend reports a run that failed before confinement).
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { IsolatePtcRuntime, PythonPtcRuntime } from 'code-runtime-native'
import { PYTHON } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 })
const CAP = 4096
const P = 'code-runtime-native: '

const runtimes = {}
beforeAll(async () => {
  const configs = [
    ['typescript/process', IsolatePtcRuntime, { containment: 'process' }],
    ['typescript/thread', IsolatePtcRuntime, { containment: 'thread' }],
    ['python', PythonPtcRuntime, { pythonBin: PYTHON }],
  ]
  for (const [name, Class, config] of configs) {
    const ctx = new Context()
    const fiber = await ctx.plugin(Class, { ...config, maxMessageBytes: CAP, timeoutMs: 10_000 })
    runtimes[name] = { fiber, runtime: ctx.ptcRuntime }
  }
})
afterAll(async () => {
  for (const { fiber } of Object.values(runtimes)) await fiber.dispose()
})

/** A `tools` namespace whose calls are counted. */
function tools(functions) {
  const calls = []
  const counted = Object.create(null)
  for (const [name, fn] of Object.entries(functions)) {
    counted[name] = async (args) => {
      calls.push(name)
      return fn(args)
    }
  }
  return { calls, bindings: [{ global: 'tools', functions: counted }] }
}

const overflow = (what) =>
  `${P}${what}, more than maxMessageBytes (${CAP}); the run was ended. Pass less per call, or raise maxMessageBytes in the runtime's config`

describe.each(['typescript/process', 'typescript/thread', 'python'])('%s', (name) => {
  const python = name === 'python'
  const run = (program, bindings = []) => {
    const { runtime } = runtimes[name]
    return runtime.run(runtime.resolve({ program, bindings }))
  }

  it('a call whose arguments are past the cap ends the run as protocol; the host never sees it', async () => {
    const { calls, bindings } = tools({ echo: async (x) => x })
    // {"s":"…"} of 4 100 characters: 4 108 bytes of JSON.
    const program = python
      ? 'await tools.echo({"s": "x" * 4100})\nprint("after")'
      : "await tools.echo({ s: 'x'.repeat(4100) }); console.log('after')"
    expect(await run(program, bindings)).toStrictEqual({
      logs: [],
      error: { kind: 'protocol', message: overflow("a binding call's arguments are 4108 bytes of JSON") },
    })
    expect(calls).toEqual([])
  })

  it('bytes, not characters: multi-byte text counts what it weighs in UTF-8', async () => {
    const { calls, bindings } = tools({ echo: async () => 'ok' })
    // 1 400 three-byte characters: 4 200 bytes of UTF-8, 1 400 code units.
    const program = python ? 'return await tools.echo({"s": "€" * 1400})' : "return await tools.echo({ s: '€'.repeat(1400) })"
    const result = await run(program, bindings)
    expect(result.error).toEqual({ kind: 'protocol', message: overflow("a binding call's arguments are 4208 bytes of JSON") })
    expect(calls).toEqual([])
  })

  it('the calls in flight together are capped: the one that passes it ends the run', async () => {
    const { calls, bindings } = tools({ hold: () => new Promise(() => {}) })
    // Each call carries {"s":"…"} of 1 500 characters (1 508 bytes): the third passes 4 096.
    const program = python
      ? 'import asyncio\nfor _ in range(3):\n    asyncio.ensure_future(tools.hold({"s": "y" * 1500}))\nawait asyncio.sleep(5)'
      : "for (let i = 0; i < 3; i++) tools.hold({ s: 'y'.repeat(1500) }); await new Promise((r) => setTimeout(r, 5000))"
    const result = await run(program, bindings)
    expect(result.error).toEqual({ kind: 'protocol', message: overflow('the binding calls in flight carry 4524 bytes of arguments') })
    expect(calls).toEqual(['hold', 'hold'])
  })

  it('settled calls give their bytes back: many calls under the cap in turn all run', async () => {
    const { calls, bindings } = tools({ echo: async ({ s }) => s.length })
    const program = python
      ? 'total = 0\nfor _ in range(20):\n    total += await tools.echo({"s": "z" * 3000})\nreturn total'
      : "let total = 0; for (let i = 0; i < 20; i++) total += await tools.echo({ s: 'z'.repeat(3000) }); return total"
    expect(await run(program, bindings)).toStrictEqual({ logs: [], value: 60000 })
    expect(calls).toHaveLength(20)
  })

  it("a reply past the cap ends the run as protocol; the program never sees it", async () => {
    const { bindings } = tools({ big: async () => 'r'.repeat(5000) })
    const program = python
      ? 'r = await tools.big({})\nprint("got", len(r))'
      : "const r = await tools.big({}); console.log('got', r.length)"
    expect(await run(program, bindings)).toStrictEqual({
      logs: [],
      error: { kind: 'protocol', message: overflow("a binding's reply is 5002 bytes of JSON") },
    })
  })
})

describe('the sandbox facts of a run that never started', () => {
  it.each(['typescript/process', 'typescript/thread'])('%s: a pre-aborted run reports no enforcement', async (name) => {
    const { runtime } = runtimes[name]
    const controller = new AbortController()
    controller.abort('not now')
    const policy = { mode: 'read-only', workspaceRoot: process.cwd() }
    const spec = runtime.resolve({ program: 'return 1', bindings: [], sandboxPolicy: policy, signal: controller.signal })
    expect(await runtime.run(spec)).toStrictEqual({
      logs: [],
      error: { kind: 'abort', message: 'not now' },
      sandbox: { mode: 'read-only', denied: false },
    })
    const ran = await runtime.run(runtime.resolve({ program: 'return 1', bindings: [], sandboxPolicy: policy }))
    expect(ran.sandbox).toEqual({ mode: 'read-only', denied: false, enforcement: name === 'typescript/thread' ? 'partial' : 'full' })
  })
})
