// The process containment tier (`containment: 'process'`) against hostile programs: V8 fatal
// errors, built-ins that never check for termination, heap and native-memory bombs, bridge
// amplification, escape attempts, and bursts of runs. Each case asserts its result, that the host
// survives (a `return 1` afterwards), and a generous hang guard on the time it took.
//
// Some of these programs crash a host that runs isolates on its own threads (a V8 fatal error
// aborts the whole process) or hang it (a built-in that never checks for termination, a heap
// bomb the thread tier does not stop). Those cases first assert that the runtime really runs in
// sandbox processes (`requireProcessTier`) and fail there, without running the program, when it
// does not.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadIsolate, tools } from './helpers.mjs'
import { runProcesses, sandboxProcesses, sandboxRoots, templateProcesses, waitFor } from './process-helpers.mjs'

const REPO = fileURLToPath(new URL('..', import.meta.url))
const SECRET = 'sekret-7f3a9c'
process.env.CRN_SECRET = SECRET

const loadProcess = (config = {}) => loadIsolate({ containment: 'process', ...config })

/**
 * Refuses to run a host-fatal or host-hanging program unless runs live in sandbox processes.
 * `fiber`, when given, is disposed before the failure propagates.
 */
async function requireProcessTier(runtime, fiber, why = 'in thread mode this program crashes or hangs the host') {
  try {
    expect(runtime.sandbox?.process, `runs must be in sandbox processes: ${why}`).toBe(true)
  } catch (error) {
    await fiber?.dispose()
    throw error
  }
}

function readStatus(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return ''
  }
}

async function expectHealthy(runtime) {
  expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({ logs: [], value: 1 })
}

/** Runs `program` and returns `[result, elapsed ms]`. */
async function timed(runtime, request) {
  const start = performance.now()
  const result = await runtime.run({ bindings: [], ...request })
  return [result, performance.now() - start]
}

/** A worker-exit result: the heap message exactly, or any other non-empty message naming the isolate. */
function expectWorkerExit(result, { logs = [], heapMb }) {
  expect(Object.keys(result).sort()).toEqual(['error', 'logs'])
  expect(result.logs).toEqual(logs)
  expect(result.error.kind).toBe('worker-exit')
  expect(typeof result.error.message).toBe('string')
  expect(result.error.message.length).toBeGreaterThan(0)
  if (result.error.message.startsWith('isolate heap limit')) {
    expect(result.error.message).toBe(`isolate heap limit reached (${heapMb} MiB)`)
  } else {
    expect(result.error.message).toMatch(/isolate/)
  }
}

// V8 aborts the process on each of these (a fatal "invalid array length"/"invalid table size" or
// an allocation V8 cannot recover from), heap limit or not.
const FATAL = [
  "'x'.repeat(2 ** 27 + 1000).split('')",
  'Array.prototype.sort.call({ length: 2 ** 32 - 1 })',
  'Array.prototype.toSorted.call({ length: 2 ** 32 - 1 })',
]

// Built-ins that walk a huge array-like without checking for termination.
const UNINTERRUPTIBLE = [
  'Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)',
  'Array.prototype.join.call({ length: 2 ** 28 })',
  'Array.prototype.with.call({ length: 2 ** 32 - 1 }, 0, 1)',
]

describe('V8 fatal errors end the sandbox process, not the host', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadProcess({ computeMs: 20000 }))
  })
  afterAll(() => fiber.dispose())

  for (const fatal of FATAL) {
    it(`${fatal} resolves worker-exit`, async () => {
      await requireProcessTier(runtime)
      const [result, elapsed] = await timed(runtime, { program: fatal })
      expectWorkerExit(result, { heapMb: 512 })
      expect(elapsed).toBeLessThan(30000)
      await expectHealthy(runtime)
    })

    it(`${fatal} keeps the logs printed before the crash`, async () => {
      await requireProcessTier(runtime)
      const [result, elapsed] = await timed(runtime, { program: `console.log('before'); ${fatal}` })
      expectWorkerExit(result, { logs: ['before'], heapMb: 512 })
      expect(elapsed).toBeLessThan(30000)
      await expectHealthy(runtime)
    })
  }
})

describe('uninterruptible built-ins under the compute budget', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadProcess({ computeMs: 300 }))
  })
  afterAll(() => fiber.dispose())

  for (const program of UNINTERRUPTIBLE) {
    it(`${program} times out at 300 ms busy`, async () => {
      await requireProcessTier(runtime)
      const [result, elapsed] = await timed(runtime, { program })
      expect(result).toEqual({ logs: [], error: { kind: 'timeout', message: 'compute budget exhausted (300ms busy)' } })
      expect(elapsed).toBeLessThan(10000)
      await expectHealthy(runtime)
    })
  }
})

// A waiting sandbox process makes its watchdog's thread before its run; that thread leaves after
// a second without a run, and the run then makes it again, under the allowlist. Either way the
// process's own watchdog stops the loop (the location is its; the host's verdict has none).
describe("a waiting process's watchdog", () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadProcess({ computeMs: 300 }))
  })
  afterAll(() => fiber.dispose())

  const expectStoppedInside = (result) =>
    expect(result).toEqual({
      logs: [],
      error: { kind: 'timeout', message: 'compute budget exhausted (300ms busy) at program.ts:1:1' },
    })

  it('stops a loop in a process that waited briefly, and in one that waited past its watchdog', async () => {
    await requireProcessTier(runtime)
    await expectHealthy(runtime)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expectStoppedInside(await runtime.run({ program: 'for (;;) {}', bindings: [] }))
    await new Promise((resolve) => setTimeout(resolve, 1600))
    const [result, elapsed] = await timed(runtime, { program: 'for (;;) {}' })
    expectStoppedInside(result)
    expect(elapsed).toBeLessThan(10000)
    await expectHealthy(runtime)
  })
})

describe('uninterruptible built-ins under the wall ceiling', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadProcess({ computeMs: 600000, maxWallMs: 500 }))
  })
  afterAll(() => fiber.dispose())

  for (const program of UNINTERRUPTIBLE) {
    it(`${program} ends at the 500 ms ceiling`, async () => {
      await requireProcessTier(runtime)
      const [result, elapsed] = await timed(runtime, { program })
      expect(result).toEqual({ logs: [], error: { kind: 'timeout', message: 'wall-clock ceiling reached (500ms)' } })
      expect(elapsed).toBeLessThan(10000)
      await expectHealthy(runtime)
    })
  }
})

describe('uninterruptible built-ins and abort', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadProcess())
  })
  afterAll(() => fiber.dispose())

  for (const program of UNINTERRUPTIBLE) {
    it(`${program} ends with the abort reason`, async () => {
      await requireProcessTier(runtime)
      const controller = new AbortController()
      const reason = { toString: () => 'stopped by the host' }
      setTimeout(() => controller.abort(reason), 200)
      const [result, elapsed] = await timed(runtime, { program, signal: controller.signal })
      expect(result).toEqual({ logs: [], error: { kind: 'abort', message: String(reason) } })
      expect(elapsed).toBeLessThan(10000)
      await expectHealthy(runtime)
    })
  }
})

describe('abort of a computing isolate (the doorbell)', () => {
  // A computing isolate reads nothing from its channel: the supervisor rings the process's
  // doorbell, its doorbell thread reads the abort and the isolate unwinds, reporting the CPU time
  // it spent. (How much it got in the 150 ms before the abort depends on the machine's load, so
  // only that it computed is asserted.)
  it('the isolate unwinds with the abort reason and reports its own CPU time', async () => {
    const { runtime, fiber } = await loadProcess({ computeMs: 30000 })
    try {
      await requireProcessTier(runtime, fiber)
      for (let i = 0; i < 3; i++) {
        const controller = new AbortController()
        setTimeout(() => controller.abort(`stop ${i}`), 150)
        let stats
        const result = await runtime.run({ program: 'for (;;) {}', bindings: [], signal: controller.signal, onStats: (s) => (stats = s) })
        expect(result).toEqual({ logs: [], error: { kind: 'abort', message: `stop ${i}` } })
        expect(stats.cpuMs).toBeGreaterThan(0)
        await expectHealthy(runtime)
      }
    } finally {
      await fiber.dispose()
    }
  })
})

describe('a host that dies while its isolate computes', () => {
  // Nothing reads a computing isolate's channel, but its process's doorbell thread watches for the
  // host hanging up: killed with SIGKILL (no dispose, no chance to clean up), the host leaves no
  // sandbox process behind, neither the one computing nor the spare.
  it('takes every sandbox process with it', async () => {
    const entry = fileURLToPath(new URL('../lib/index.mjs', import.meta.url))
    const script = `
      import { Context } from 'cordis'
      import { IsolateCodeRuntime } from ${JSON.stringify(entry)}
      const ctx = new Context()
      await ctx.plugin(IsolateCodeRuntime, { containment: 'process', computeMs: 600000, maxWallMs: 600000 })
      console.log('running')
      await ctx.codeRuntime.run({ program: 'for (;;) {}', bindings: [] })`
    const host = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise((resolve) => host.stdout.once('data', resolve))
    // The process computing and the spare, both forked by the template.
    await waitFor(() => runProcesses(host.pid).length >= 2, 10000)
    const pids = sandboxProcesses(host.pid).map((p) => p.pid)
    expect(pids.length).toBeGreaterThan(0)
    host.kill('SIGKILL')
    await new Promise((resolve) => host.once('exit', resolve))
    const alive = () => pids.filter((pid) => fs.existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readStatus(pid)))
    await waitFor(() => alive().length === 0, 10000)
    expect(alive()).toEqual([])
  })
})

describe('dispose during uninterruptible built-ins', () => {
  it('resolves every run as runtime disposed within seconds and leaves no sandbox process', async () => {
    // Every earlier describe disposed its runtime: nothing of theirs may be left.
    expect(sandboxProcesses()).toEqual([])
    // A process for each run, so every one is in flight (none waits for admission) at dispose.
    const { runtime, fiber } = await loadProcess({ maxProcesses: UNINTERRUPTIBLE.length + 1 })
    await requireProcessTier(runtime, fiber)
    const runs = UNINTERRUPTIBLE.map((program) => runtime.run({ program: `console.log('started'); ${program}`, bindings: [] }))
    await new Promise((r) => setTimeout(r, 300))
    const start = performance.now()
    await fiber.dispose()
    const disposeMs = performance.now() - start
    expect(sandboxProcesses()).toEqual([])
    const results = await Promise.all(runs)
    for (const result of results) {
      expect(result).toEqual({ logs: ['started'], error: { kind: 'abort', message: 'runtime disposed' } })
    }
    expect(disposeMs).toBeLessThan(10000)
    await expect(runtime.run({ program: 'return 1', bindings: [] })).rejects.toThrow(/after disposal/)
    const next = await loadProcess()
    await expectHealthy(next.runtime)
    await next.fiber.dispose()
    expect(sandboxProcesses()).toEqual([])
  })
})

describe('heap bomb', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadProcess({ maxOldGenerationSizeMb: 48 }))
  })
  afterAll(() => fiber.dispose())

  it('ends worker-exit at the heap limit; the host does not carry the heap', async () => {
    // In thread mode this program is not stopped: neither the heap cap nor the budgets end it, and
    // the host's RSS grows by gigabytes.
    await requireProcessTier(runtime)
    const rssBefore = process.memoryUsage().rss
    let peakRss = rssBefore
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20)
    const [result, elapsed] = await timed(runtime, {
      program: "const keep = []; for (;;) keep.push({ a: new Array(1000).fill('x' + keep.length) })",
    }).finally(() => clearInterval(sampler))
    expect(result).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'isolate heap limit reached (48 MiB)' } })
    expect(elapsed).toBeLessThan(30000)
    expect(Math.max(peakRss, process.memoryUsage().rss) - rssBefore).toBeLessThan(200 * 1024 * 1024)
    await expectHealthy(runtime)
  })
})

describe('memory outside the V8 heap', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadProcess({ maxOldGenerationSizeMb: 64 }))
  })
  afterAll(() => fiber.dispose())

  const heapLimit = { logs: [], error: { kind: 'worker-exit', message: 'isolate heap limit reached (64 MiB)' } }

  it('typed arrays past the cap: a catchable RangeError or the heap limit, never a host crash', async () => {
    const rssBefore = process.memoryUsage().rss
    const program = `const keep = []
      try { for (let i = 0; i < 64; i++) keep.push(new Uint8Array(16 << 20)) } catch (e) { if (e instanceof RangeError) return 'caught'; throw e }
      return keep.length`
    const [result, elapsed] = await timed(runtime, { program })
    expect([{ logs: [], value: 'caught' }, heapLimit]).toContainEqual(result)
    expect(elapsed).toBeLessThan(30000)
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024)
    await expectHealthy(runtime)
  })

  it('a 256 MiB TextEncoder output: encoded, caught or the heap limit', async () => {
    const program = `try { return new TextEncoder().encode('x'.repeat(2 ** 28)).length } catch (e) { return e instanceof RangeError ? 'caught' : String(e) }`
    const [result, elapsed] = await timed(runtime, { program })
    expect([{ logs: [], value: 2 ** 28 }, { logs: [], value: 'caught' }, heapLimit]).toContainEqual(result)
    expect(elapsed).toBeLessThan(30000)
    await expectHealthy(runtime)
  })
})

describe('bridge amplification', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadProcess({ computeMs: 2000 }))
  })
  afterAll(() => fiber.dispose())

  it('shared references cannot amplify an argument past the byte cap; the binding is never called', async () => {
    const t = tools({ len: async (s) => JSON.stringify(s).length })
    const program = `let a = 'x'.repeat(600)
      for (let i = 0; i < 20; i++) a = [a, a]
      try { await tools.len(a) } catch (e) { return [e instanceof ToolCallError, e.toolName, e.message] }`
    const [result, elapsed] = await timed(runtime, { program, bindings: [t.namespace] })
    expect(result).toEqual({ logs: [], value: [true, 'len', 'binding arguments exceeded 67108864 bytes'] })
    expect(t.calls.len).toBe(0)
    expect(elapsed).toBeLessThan(10000)
    await expectHealthy(runtime)
  })
})

describe('escape attempts from inside the sandbox', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadProcess())
  })
  afterAll(() => fiber.dispose())

  // (module (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))))
  const WASI_IMPORT = [
    0, 97, 115, 109, 1, 0, 0, 0, 1, 9, 1, 96, 4, 127, 127, 127, 127, 1, 127, 2, 35, 1, 22, 119, 97, 115, 105, 95, 115, 110, 97,
    112, 115, 104, 111, 116, 95, 112, 114, 101, 118, 105, 101, 119, 49, 8, 102, 100, 95, 119, 114, 105, 116, 101, 0, 0,
  ]

  it('finds no Node authority at the JS level, and nothing of the host reaches the output', async () => {
    const t = tools()
    const program = `
      const viaObject = globalThis.constructor.constructor('return this')()
      const viaFunction = (function () {}).constructor('return this')()
      let viaBindingError
      try { await tools.fail({}) } catch (e) { viaBindingError = e.constructor.constructor('return this')() }
      const imports = []
      for (const name of ['fs', 'node:fs', 'node:child_process', '/etc/passwd', 'data:text/javascript,import fs from "node:fs"; export default fs']) {
        try { await import(name); imports.push('loaded') } catch (e) { imports.push(e instanceof TypeError && /import/.test(e.message) ? 'rejected' : String(e)) }
      }
      let wasm = 'absent'
      if (typeof WebAssembly === 'object') {
        const module = new WebAssembly.Module(new Uint8Array(${JSON.stringify(WASI_IMPORT)}))
        for (const imports of [{}, { wasi_snapshot_preview1: {} }]) {
          try { new WebAssembly.Instance(module, imports); wasm = 'instantiated' } catch (e) { wasm = e.constructor.name }
        }
      }
      let hooked = []
      Error.prepareStackTrace = (e, frames) => { hooked = frames.map((f) => [typeof f.getThis?.(), String(f.getFileName?.())]); return 'x' }
      new Error('probe').stack
      console.log(process.env.CRN_SECRET, JSON.stringify(process.env))
      return {
        require: typeof require, module: typeof module, exports: typeof exports, Buffer: typeof Buffer,
        fetch: typeof fetch, setImmediate: typeof setImmediate, dirname: typeof __dirname,
        processKeys: Object.keys(process).sort(),
        env: JSON.stringify(process.env), envFrozen: Object.isFrozen(process.env),
        nodeHooks: [typeof process.binding, typeof process.dlopen, typeof process.mainModule, typeof process.kill, typeof process.pid],
        sameGlobal: [viaObject === globalThis, viaFunction === globalThis, viaBindingError === globalThis],
        globalRequire: typeof viaObject.require, globalProcessKeys: Object.keys(viaObject.process).sort(),
        imports, wasm, hooked,
      }`
    const [result, elapsed] = await timed(runtime, { program, bindings: [t.namespace] })
    expect(result.error).toBeUndefined()
    expect(result.logs).toEqual(['undefined {}'])
    const v = result.value
    expect([v.require, v.module, v.exports, v.Buffer, v.fetch, v.setImmediate, v.dirname]).toEqual(Array(7).fill('undefined'))
    expect(v.processKeys).toEqual(['env', 'exit', 'stderr', 'stdout'])
    expect(v.env).toBe('{}')
    expect(v.envFrozen).toBe(true)
    expect(v.nodeHooks).toEqual(Array(5).fill('undefined'))
    expect(v.sameGlobal).toEqual([true, true, true])
    expect(v.globalRequire).toBe('undefined')
    expect(v.globalProcessKeys).toEqual(['env', 'exit', 'stderr', 'stdout'])
    expect(v.imports).toEqual(Array(5).fill('rejected'))
    expect(['absent', 'TypeError', 'LinkError']).toContain(v.wasm)
    for (const [, file] of v.hooked) expect(file).not.toContain(REPO)
    const text = JSON.stringify(result)
    expect(text).not.toContain(SECRET)
    expect(text).not.toContain(REPO)
    expect(elapsed).toBeLessThan(10000)
    await expectHealthy(runtime)
  })
})

describe('nothing left for the next run in the same sandbox process', () => {
  it('a run that pollutes its globals, prototypes and timers leaves nothing for the next one', async () => {
    // One process serves every run (a trusted workload's reuse), so the second run is served
    // where the first ran.
    const { runtime, fiber } = await loadProcess({ maxProcesses: 1, maxRunsPerProcess: 100 })
    await requireProcessTier(runtime, fiber)
    expect(
      await runtime.run({
        program: 'globalThis.leak = 1; Object.prototype.polluted = 1; Array.prototype.push = null; setInterval(() => {}, 1); return 1',
        bindings: [],
      }),
    ).toEqual({ logs: [], value: 1 })
    const served = runProcesses().map((p) => p.pid)
    expect(served).toHaveLength(1)
    const next = await runtime.run({
      program: 'const a = []; a.push(1); return [typeof globalThis.leak, typeof {}.polluted, a.length]',
      bindings: [],
    })
    expect(next).toEqual({ logs: [], value: ['undefined', 'undefined', 1] })
    expect(runProcesses().map((p) => p.pid)).toEqual(served)
    await fiber.dispose()
  })
})

describe('a process a program may have compromised never serves another run', () => {
  // By default each sandbox process serves one run: the next run takes a process the template
  // forked ahead of time (a copy of a process no program ran in). Which process serves a run is
  // read while the run awaits a binding call; with one process at most there is no spare then.
  it('every run, by default, is served by a process no earlier run used; each is gone after its run', async () => {
    const { runtime, fiber } = await loadProcess({ maxProcesses: 1 })
    await requireProcessTier(runtime, fiber)
    const servers = []
    const seen = { global: 'tools', functions: { where: async () => (servers.push(runProcesses().map((p) => p.pid)), null) } }
    for (let i = 0; i < 4; i++) {
      expect(await runtime.run({ program: `await tools.where({}); return ${i}`, bindings: [seen] })).toEqual({ logs: [], value: i })
    }
    expect(servers.map((pids) => pids.length)).toEqual([1, 1, 1, 1])
    const pids = servers.flat()
    expect(new Set(pids).size).toBe(4)
    // Each served one run and was retired: none of them is alive any more.
    await waitFor(() => pids.every((pid) => !runProcesses().some((p) => p.pid === pid)), 5000)
    expect(runProcesses().filter((p) => pids.includes(p.pid))).toEqual([])
    // They were all forked by one template, which itself ran nothing.
    expect(sandboxRoots()).toHaveLength(1)
    await fiber.dispose()
    expect(sandboxProcesses()).toEqual([])
  })
})

describe('a template forks processes that start with its isolate', () => {
  // The template starts V8 without threads and prepares one isolate; each process it forks runs
  // its first program in its own copy of that isolate (docs/sandbox.md#host-safety).
  // A run's retired process may be gone by the time it is looked at (it is killed and reaped
  // after its result): a process that no longer exists maps nothing.
  const mappings = (pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/maps`, 'utf8').trim().split('\n')
    } catch (error) {
      if (error.code === 'ENOENT' || error.code === 'ESRCH') return []
      throw error
    }
  }

  it('the template is single-threaded and shares no writable memory with the processes it forks', async () => {
    const { runtime, fiber } = await loadProcess({ maxProcesses: 2 })
    await requireProcessTier(runtime, fiber)
    let served = []
    const look = { global: 'tools', functions: { look: async () => ((served = runProcesses().map((p) => p.pid)), null) } }
    expect(await runtime.run({ program: 'await tools.look({}); return 1', bindings: [look] })).toEqual({ logs: [], value: 1 })
    const templates = templateProcesses()
    expect(templates).toHaveLength(1)
    const template = templates[0].pid
    // fork() copies only the calling thread: a template with a second thread could hand its
    // children a lock that thread held.
    expect(fs.readdirSync(`/proc/${template}/task`)).toHaveLength(1)
    expect(served.length).toBeGreaterThan(0)
    // A writable shared mapping would be memory one run's process could leave for the next.
    for (const pid of [template, ...runProcesses().map((p) => p.pid)]) {
      expect([pid, mappings(pid).filter((line) => /^\S+ rw.s /.test(line))]).toEqual([pid, []])
    }
    await fiber.dispose()
  })

  it('a run after the template was killed is served by a new template', async () => {
    const { runtime, fiber } = await loadProcess()
    await requireProcessTier(runtime, fiber)
    for (let i = 0; i < 3; i++) {
      expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({ logs: [], value: 1 })
      const [template] = templateProcesses()
      process.kill(template.pid, 'SIGKILL')
      // At once: the spare it forked died with it, and the template's channel may not have
      // closed yet when the run asks it for another process.
      expect(await runtime.run({ program: `return ${i}`, bindings: [] })).toEqual({ logs: [], value: i })
      expect(templateProcesses().map((p) => p.pid)).not.toContain(template.pid)
    }
    await fiber.dispose()
  })

  it("a run's context in a forked process is as fresh as a thread's: the warm-up and the pretouch leave nothing a program sees", async () => {
    const program = `return {
      names: Object.getOwnPropertyNames(globalThis).sort(),
      symbols: Object.getOwnPropertySymbols(globalThis).map(String),
      stack: new Error('x').stack.split('\\n').length,
      arrays: Object.getOwnPropertyNames(Array.prototype).length,
    }`
    const { runtime: thread, fiber: threadFiber } = await loadIsolate({ containment: 'thread' })
    const expected = await thread.run({ program, bindings: [] })
    await threadFiber.dispose()
    const { runtime, fiber } = await loadProcess()
    await requireProcessTier(runtime, fiber)
    // Back to back, a run may find its process before the pretouch began; after a pause, the
    // process waiting for it has written every slice (src/isolate/run/prepare.rs).
    for (const pauseMs of [0, 0, 0, 60, 60]) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs))
      expect(await runtime.run({ program, bindings: [] })).toEqual(expected)
    }
    await fiber.dispose()
  })

  it("gives each run a Math.random of its own, with or without reuse", async () => {
    const program = 'return [Math.random(), Math.random()].join()'
    for (const maxRunsPerProcess of [1, 3]) {
      const { runtime, fiber } = await loadProcess({ maxRunsPerProcess })
      await requireProcessTier(runtime, fiber)
      const seen = []
      for (let i = 0; i < 6; i++) seen.push((await runtime.run({ program, bindings: [] })).value)
      expect([maxRunsPerProcess, new Set(seen).size]).toEqual([maxRunsPerProcess, 6])
      await fiber.dispose()
    }
  })
})

describe('type strip in the sandbox process', () => {
  // The serve thread strips a program on its own stack when its room (64 MiB, less under a lower
  // hard limit) holds the program's worst nesting at 16 KiB a token, with 4 MiB to spare: up to
  // 3 840 tokens by default, 256 under an 8 MiB hard limit; longer programs get a thread sized
  // for them (src/process_tier/child/mod.rs, `strip_program`).
  const nested = (tokens) => ({
    brackets: '['.repeat(tokens),
    parens: `return ${'('.repeat(tokens >> 1)}1${')'.repeat(tokens >> 1)}`,
    generics: `let x: ${'A<'.repeat(tokens >> 1)}B${'>'.repeat(tokens >> 1)} = 1; return 2`,
  })
  const SIZES = [3838, 3842, 20000]
  /** What each program ended with: its value, or its error's kind and first line. */
  const outcomes = async (runtime) => {
    const out = []
    for (const tokens of SIZES) {
      for (const [name, program] of Object.entries(nested(tokens))) {
        const result = await runtime.run({ program, bindings: [] })
        out.push([tokens, name, result.error ? `${result.error.kind}: ${result.error.message.split('\n')[0]}` : result.value])
      }
    }
    return out
  }
  const expected = SIZES.flatMap((tokens) => [
    [tokens, 'brackets', 'exception: SyntaxError: Expression expected'],
    [tokens, 'parens', tokens < 10000 ? 1 : 'exception: RangeError: Maximum call stack size exceeded'],
    [tokens, 'generics', 2],
  ])

  it('programs nested at the edge of the serve thread\'s room and past it strip cleanly', async () => {
    const { runtime, fiber } = await loadProcess()
    await requireProcessTier(runtime, fiber, 'the strip on the serve thread is the sandbox process\'s')
    expect(await outcomes(runtime)).toEqual(expected)
    await expectHealthy(runtime)
    await fiber.dispose()
  })

  it('a host whose hard stack limit is 8 MiB strips the same programs as cleanly', async () => {
    // The sandbox processes inherit the host's limits: their serve thread gets 8 MiB of room.
    const script = `
      import { Context } from 'cordis'
      const { IsolateCodeRuntime } = await import(${JSON.stringify(new URL('../lib/index.mjs', import.meta.url).href)})
      const ctx = new Context()
      await ctx.plugin(IsolateCodeRuntime, { containment: 'process' })
      const runtime = ctx.get('codeRuntime')
      const outcomes = ${outcomes.toString()}
      const nested = ${nested.toString()}
      const SIZES = ${JSON.stringify(SIZES)}
      const limit = (await import('node:child_process')).execSync('ulimit -H -s', { shell: '/bin/sh' }).toString().trim()
      console.log(JSON.stringify({ limit, process: runtime.sandbox.process, out: await outcomes(runtime) }))
      process.exit(0)`
    const child = spawn('/bin/sh', ['-c', 'ulimit -S -s 8192 && ulimit -H -s 8192 && exec "$0" --input-type=module -e "$1"', process.execPath, script], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    const code = await new Promise((resolve) => child.on('exit', resolve))
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({ limit: '8192', process: true, out: expected })
  })
})

describe('runtime.sandbox', () => {
  const expectLayerFields = (sandbox) => {
    // `uid` (the processes' uid outside their namespaces) only where there are processes.
    const keys = ['helper', 'landlock', 'memoryCgroup', 'namespaces', 'privateRoot', 'process', 'processCap', 'seccomp', 'seccompAllowlist']
    expect(Object.keys(sandbox).filter((k) => sandbox[k] !== undefined).sort()).toEqual(
      sandbox.process ? [...keys, 'uid'].sort() : keys,
    )
    expect(typeof sandbox.namespaces).toBe('boolean')
    expect(typeof sandbox.landlock).toBe('number')
    expect(typeof sandbox.seccomp).toBe('boolean')
    for (const [key, value] of Object.entries(sandbox)) expect([key, ['boolean', 'number'].includes(typeof value)]).toEqual([key, true])
  }

  it('reports process: true and its kernel layers in process mode', async () => {
    const { runtime, fiber } = await loadProcess()
    expect(runtime.sandbox?.process).toBe(true)
    expectLayerFields(runtime.sandbox)
    await expectHealthy(runtime)
    await fiber.dispose()
  })

  it('reports process: false in thread mode', async () => {
    const { runtime, fiber } = await loadIsolate({ containment: 'thread' })
    expect(runtime.sandbox?.process).toBe(false)
    expectLayerFields(runtime.sandbox)
    expect(sandboxProcesses()).toEqual([])
    await expectHealthy(runtime)
    await fiber.dispose()
  })
})

describe('a burst of 64 runs', () => {
  it('all succeed, and no more than maxProcesses sandbox processes are alive at any sample', async () => {
    const maxProcesses = 3
    const { runtime, fiber } = await loadProcess({ maxProcesses })
    await requireProcessTier(runtime, fiber, 'the process cap is what this test measures')
    let peak = 0
    const sample = () => (peak = Math.max(peak, runProcesses().length))
    const sampler = setInterval(sample, 2)
    const start = performance.now()
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) => runtime.run({ program: `await null; return ${i}`, bindings: [] })),
    ).finally(() => clearInterval(sampler))
    sample()
    const elapsed = performance.now() - start
    results.forEach((result, i) => expect(result).toEqual({ logs: [], value: i }))
    expect(peak).toBeGreaterThanOrEqual(1)
    expect(peak).toBeLessThanOrEqual(maxProcesses)
    expect(elapsed).toBeLessThan(30000)
    await expectHealthy(runtime)
    await fiber.dispose()
    expect(sandboxProcesses()).toEqual([])
  })
})

describe('maxProcesses by default', () => {
  it('is one more than the cores: runs that wait fill every slot, and no more', async () => {
    // One process more than the cores keeps them busy while a finished run's process exits and
    // the next one is forked (docs/typescript.md#containment).
    const cores = os.availableParallelism?.() ?? os.cpus().length
    const { runtime, fiber } = await loadProcess()
    await requireProcessTier(runtime, fiber, 'the process cap is what this test measures')
    let peak = 0
    const sample = () => (peak = Math.max(peak, runProcesses().length))
    const sampler = setInterval(sample, 5)
    const runs = 3 * (cores + 1)
    const results = await Promise.all(
      Array.from({ length: runs }, (_, i) => runtime.run({ program: `await new Promise((r) => setTimeout(r, 150)); return ${i}`, bindings: [] })),
    ).finally(() => clearInterval(sampler))
    results.forEach((result, i) => expect(result).toEqual({ logs: [], value: i }))
    expect(peak).toBe(cores + 1)
    await fiber.dispose()
  })
})

describe('after every runtime of this file was disposed', () => {
  it('no sandbox process and no open fd to one is left', () => {
    expect(sandboxProcesses()).toEqual([])
    const fds = fs.readdirSync('/proc/self/fd').map((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`)
      } catch {
        return ''
      }
    })
    expect(fds.filter((target) => target.includes('code-runtime-native-sandbox'))).toEqual([])
  })
})

describe('a program compiled whole (src/isolate/run/program.rs, EagerCompile)', () => {
  // Every function a program declares gets its bytecode in the one compile, called or not: a
  // program can make that compile allocate past the heap cap before any statement runs. The
  // compile's allocations are the run's, capped like its objects, in either tier.
  const NEVER_CALLED = Array.from({ length: 25000 }, (_, i) => `function f${i}() { return ${i} }`).join('\n') + '\nreturn 1'

  for (const containment of ['process', 'thread']) {
    it(`${containment}: 25 000 functions it never calls end at an 8 MiB heap cap, cleanly; the host does not carry them`, async () => {
      const { runtime, fiber } = await loadIsolate({ containment, maxOldGenerationSizeMb: 8 })
      const rssBefore = process.memoryUsage().rss
      const [result, elapsed] = await timed(runtime, { program: NEVER_CALLED })
      expect(result).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'isolate heap limit reached (8 MiB)' } })
      expect(elapsed).toBeLessThan(10000)
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024)
      await expectHealthy(runtime)
      await fiber.dispose()
    })

    it(`${containment}: with the default heap cap the same program completes`, async () => {
      const { runtime, fiber } = await loadIsolate({ containment })
      expect(await runtime.run({ program: NEVER_CALLED, bindings: [] })).toEqual({ logs: [], value: 1 })
      await expectHealthy(runtime)
      await fiber.dispose()
    })
  }
})
