// The behaviours the host's own ptc test suites test, run against our `IsolatePtcRuntime` and
// `PythonPtcRuntime` (issue 28): each class built by `definePtcRuntimes` on the host's abstract
// `PtcRuntime` (`@deepseek-ai/dsh-ptc-runtime` from npm), registered in the host's cordis
// `Context`, and called as the host calls it, `runtime.run(runtime.resolve(request))`.
//
// Read (not copied) from the public fork zsagi1368/deepseek-harness-zDSH, whose packages are at
// 0.1.7-rc.2 (the index stores each file at one of two commits of that fork):
// - packages/ptc-runtime/ptc-runtime/tests/service.spec.ts          a18d8a996c0e6a0f28f0d65d21966ed46039515e
// - packages/ptc-runtime/ptc-runtime/tests/reserved.spec.ts         1dd6c6a308f1db1d57f6d117d673e73f00072b68
// - packages/ptc-runtime/ptc-runtime-node/tests/bindings.spec.ts    1dd6c6a308f1db1d57f6d117d673e73f00072b68
// - packages/ptc-runtime/ptc-runtime-node/tests/runtime.spec.ts     1dd6c6a308f1db1d57f6d117d673e73f00072b68
// - packages/ptc-runtime/ptc-runtime-node/tests/host-failures.spec.ts a18d8a996c0e6a0f28f0d65d21966ed46039515e
// - packages/ptc-runtime/ptc-runtime-node/tests/bootstrap.spec.ts   a18d8a996c0e6a0f28f0d65d21966ed46039515e
// - packages/ptc-runtime/ptc-runtime-node/tests/output-ledger.spec.ts 1dd6c6a308f1db1d57f6d117d673e73f00072b68
// - packages/ptc-runtime/ptc-runtime-node/tests/json-wire.spec.ts   1dd6c6a308f1db1d57f6d117d673e73f00072b68
// - packages/ptc-runtime/ptc-runtime-node/tests/process-main.spec.ts a18d8a996c0e6a0f28f0d65d21966ed46039515e
// - packages/ptc-runtime/ptc-runtime-node/tests/built-lib.e2e.ts    a18d8a996c0e6a0f28f0d65d21966ed46039515e
// - packages/experimental/ptc-runtime-python/tests/runtime.spec.ts  a18d8a996c0e6a0f28f0d65d21966ed46039515e
// The rest of those packages' tests (channel, launch, process, output-json, output-stream; the
// Python package's protocol and staging units) test the host's own transport and launcher, which
// no runtime of this seam shares; what they guard end to end is run here through the behaviours
// above. Where we differ on purpose, the test asserts our behaviour and docs/seam.md ("The host's
// own backends", "From the host's own test suites") says why.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import vm from 'node:vm'
import { Context } from '@deepseek-ai/cordis'
import {
  PORTABLE_RESERVED_WORDS,
  PtcRuntime,
  RESERVED_BINDING_GLOBALS,
  RESERVED_ERROR_MEMBERS,
} from '@deepseek-ai/dsh-ptc-runtime'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { definePtcRuntimes } from 'code-runtime-native'
import { PYTHON } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 })
const { IsolatePtcRuntime, PythonPtcRuntime } = definePtcRuntimes(PtcRuntime)
const CLASSES = { typescript: IsolatePtcRuntime, python: PythonPtcRuntime }
const ISOLATION = { typescript: 'v8-isolate', python: 'process' }
const WORKSPACE = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'crn-host-suites-')))
const MAX_TIMER_MS = 2147483647
const TOOL_ERROR = { name: 'ToolCallError', memberNameProperty: 'toolName' }

const fibers = []
const shared = {}
beforeAll(async () => {
  shared.typescript = await mount(IsolatePtcRuntime, { timeoutMs: 8000 })
  shared.python = await mount(PythonPtcRuntime, { timeoutMs: 8000 })
})
afterAll(async () => {
  for (const fiber of fibers) await fiber.dispose()
  fs.rmSync(WORKSPACE, { recursive: true, force: true })
})

/** One runtime in a context of its own, as the host's `mountRuntime` and `setup` make one. */
async function mount(Class, config = {}) {
  const ctx = new Context()
  const base = Class === PythonPtcRuntime ? { pythonBin: PYTHON, graceMs: 200 } : {}
  const fiber = await ctx.plugin(Class, { cwd: WORKSPACE, ...base, ...config })
  fibers.push(fiber)
  const runtime = ctx.ptcRuntime
  return { ctx, fiber, runtime, run: (request) => runtime.run(runtime.resolve(request)) }
}

/** One `it` per language that has a case, each given the shared runtime of its language. */
function both(name, cases) {
  for (const language of ['typescript', 'python']) {
    if (cases[language] !== undefined) it(`${name} (${language})`, () => cases[language](shared[language], language))
  }
}

const tools = (functions, errorClass = TOOL_ERROR) => [{ global: 'tools', functions, errorClass }]
const py = (...lines) => lines.join('\n')

/** The bytes the host's output cap counts: the logs' JSON and the failure message's. */
const outputBytes = (result) =>
  Buffer.byteLength(JSON.stringify(result.logs)) + Buffer.byteLength(JSON.stringify(result.error?.message ?? ''))

function deferred() {
  let resolve
  const promise = new Promise((r) => (resolve = r))
  return { promise, resolve }
}

/** A binding that tells when the program made its call, and never answers. */
function entering() {
  const entered = deferred()
  return { entered: entered.promise, bindings: tools({ enter: () => (entered.resolve(), new Promise(() => {})) }) }
}

/** Like `entering`, but the call is answered at once (the host's `enter` returns null). */
function enteringAnswered() {
  const entered = deferred()
  return { entered: entered.promise, bindings: tools({ enter: async () => (entered.resolve(), null) }) }
}

describe('ptc-runtime/tests/service.spec.ts: the seam contract', () => {
  both('registers as ctx.ptcRuntime and serves the abstract API', {
    typescript: async ({ runtime, run }) => {
      expect(runtime).toBeInstanceOf(PtcRuntime)
      expect([runtime.language, runtime.isolation, runtime.sandboxMode]).toEqual(['typescript', 'v8-isolate', undefined])
      const calls = []
      const bindings = [{ global: 'tools', functions: { probe: async (args) => (calls.push(args), null) } }]
      expect(await run({ program: 'await tools.probe({ from: "stub" })', bindings })).toStrictEqual({ logs: [] })
      expect(calls).toEqual([{ from: 'stub' }])
    },
    python: async ({ runtime, run }) => {
      expect(runtime).toBeInstanceOf(PtcRuntime)
      expect([runtime.language, runtime.isolation]).toEqual(['python', 'process'])
      // Where the kernel enforces file policies the configured mode is advertised (no host policy
      // service here); the host's stub advertises none.
      const enforced = runtime.sandbox.helper === true && runtime.sandbox.landlock > 0
      expect(runtime.sandboxMode).toBe(enforced ? 'read-only' : undefined)
      const calls = []
      const bindings = [{ global: 'tools', functions: { probe: async (args) => (calls.push(args), null) } }]
      // Python has no `undefined`: a body that returns nothing completes as null.
      expect(await run({ program: 'await tools.probe({"from": "stub"})', bindings })).toStrictEqual({ logs: [], value: null })
      expect(calls).toEqual([{ from: 'stub' }])
    },
  })

  both('reports a failed run as an error field on a resolved result, never a rejection', {
    typescript: async ({ run }) => {
      const result = await run({ program: 'console.log("boom"); throw new Error("boom")', bindings: [] })
      expect(result).toStrictEqual({ logs: ['boom'], error: { kind: 'exception', message: 'Error: boom\n    at program.ts:1:28' } })
    },
    python: async ({ run }) => {
      const result = await run({ program: py('print("boom")', 'raise RuntimeError("boom")'), bindings: [] })
      expect(Object.keys(result)).toEqual(['logs', 'error'])
      expect(result.logs).toEqual(['boom'])
      expect(result.error.kind).toBe('exception')
      expect(result.error.message).toMatch(/line 2, in __dsh_main__\n.*\nRuntimeError: boom$/s)
    },
  })

  both('reports a pre-aborted signal as an abort failure', {
    typescript: async ({ run }) => {
      const controller = new AbortController()
      controller.abort('cancelled')
      const result = await run({ program: 'return 1', bindings: [], signal: controller.signal })
      expect(result).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'cancelled' } })
    },
    python: async ({ run }) => {
      const controller = new AbortController()
      controller.abort('cancelled')
      const result = await run({ program: 'return 1', bindings: [], signal: controller.signal })
      expect(result).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'cancelled' } })
    },
  })

  for (const language of ['typescript', 'python']) {
    it(`is removed from the context when the providing fiber disposes (${language})`, async () => {
      const { ctx, fiber } = await mount(CLASSES[language])
      expect(ctx.get('ptcRuntime')).toBeInstanceOf(CLASSES[language])
      await fiber.dispose()
      expect(ctx.get('ptcRuntime')).toBeUndefined()
    })

    it(`rejects a second implementation in the same context (${language})`, async () => {
      const { ctx, fiber } = await mount(CLASSES[language])
      const config = language === 'python' ? { cwd: WORKSPACE, pythonBin: PYTHON } : { cwd: WORKSPACE }
      await expect(ctx.plugin(CLASSES[language], config)).rejects.toThrow(/registered/)
      expect(ctx.get('ptcRuntime')).toBeInstanceOf(CLASSES[language])
      await fiber.dispose()
    })
  }
})

describe('ptc-runtime/tests/reserved.spec.ts: the portable names, enforced by each runtime', () => {
  const catchMember = {
    typescript: (member) => `try { await tools.fail({}) } catch (e) { return e[${JSON.stringify(member)}] }`,
    python: (member) => py('try:', '    await tools.fail({})', 'except ToolCallError as e:', `    return getattr(e, ${JSON.stringify(member)})`),
  }
  const fail = { fail: async () => { throw new Error('denied') } }

  for (const language of ['typescript', 'python']) {
    it(`refuses every RESERVED_BINDING_GLOBALS member as a global; tools is usable (${language})`, async () => {
      const { run } = shared[language]
      expect(RESERVED_BINDING_GLOBALS.size).toBeGreaterThanOrEqual(5)
      for (const global of RESERVED_BINDING_GLOBALS) {
        await expect(run({ program: 'return 1', bindings: [{ global, functions: {} }] })).rejects.toThrow(`"${global}"`)
      }
      expect(await run({ program: 'return 1', bindings: [{ global: 'tools', functions: {} }] })).toMatchObject({ value: 1 })
    })

    it(`refuses RESERVED_ERROR_MEMBERS and dunders as memberNameProperty; code, _private, __mid are usable (${language})`, async () => {
      const { run } = shared[language]
      for (const member of [...RESERVED_ERROR_MEMBERS, '__dict__', '__init__', '__x__']) {
        const errorClass = { name: 'ToolCallError', memberNameProperty: member }
        await expect(run({ program: 'return 1', bindings: tools(fail, errorClass) })).rejects.toThrow(`"${member}"`)
      }
      for (const member of ['code', '_private', '__mid', '____']) {
        const errorClass = { name: 'ToolCallError', memberNameProperty: member }
        const result = await run({ program: catchMember[language](member), bindings: tools(fail, errorClass) })
        expect(result).toStrictEqual({ logs: [], value: 'fail' })
      }
    })

    it(`refuses the reserved words of either language as globals (${language})`, async () => {
      const { run } = shared[language]
      for (const global of ['function', 'lambda', 'nonlocal', 'class', 'typeof']) {
        expect(PORTABLE_RESERVED_WORDS.has(global)).toBe(true)
        await expect(run({ program: 'return 1', bindings: [{ global, functions: {} }] })).rejects.toThrow(`"${global}"`)
      }
    })
  }
})

describe('ptc-runtime-node/tests/bindings.spec.ts: binding validation', () => {
  const callProto = { typescript: 'return await tools["__proto__"]({})', python: 'return await tools["__proto__"]({})' }

  for (const language of ['typescript', 'python']) {
    it(`rejects unusable globals (${language})`, async () => {
      for (const global of ['$name', '', 'while', 'lambda', 'console']) {
        await expect(shared[language].run({ program: 'return 1', bindings: [{ global, functions: {} }] })).rejects.toThrow(
          `binding global "${global}"`,
        )
      }
    })

    it(`rejects duplicated globals and accepts arbitrary own member names (${language})`, async () => {
      const { run } = shared[language]
      const functions = Object.create(null)
      functions.__proto__ = async () => 'own'
      expect(await run({ program: callProto[language], bindings: [{ global: 'tools', functions }] })).toStrictEqual({ logs: [], value: 'own' })
      const twice = [{ global: 'tools', functions }, { global: 'tools', functions }]
      await expect(run({ program: 'return 1', bindings: twice })).rejects.toThrow('duplicate binding global "tools"')
    })

    it(`rejects invalid error class names and members (${language})`, async () => {
      const { run } = shared[language]
      for (const name of ['$name', 'while', 'console', 'tools']) {
        const bindings = [{ global: 'tools', functions: {}, errorClass: { name, memberNameProperty: 'member' } }]
        await expect(run({ program: 'return 1', bindings })).rejects.toThrow(`"${name}"`)
      }
      for (const memberNameProperty of ['', 'name', '__member__']) {
        const bindings = [{ global: 'tools', functions: {}, errorClass: { name: 'ToolError', memberNameProperty } }]
        await expect(run({ program: 'return 1', bindings })).rejects.toThrow(/member/)
      }
    })

    it(`rejects two injected constructors with the same name (${language})`, async () => {
      const bindings = ['first', 'second'].map((global) => ({
        global,
        functions: {},
        errorClass: { name: 'ToolError', memberNameProperty: 'member' },
      }))
      // The TypeScript wording is the seam's, the Python wording the host's Python backend's.
      const message = language === 'typescript' ? 'duplicate injected global "ToolError"' : 'errorClass.name "ToolError" collides with another injected global'
      await expect(shared[language].run({ program: 'return 1', bindings })).rejects.toThrow(message)
    })
  }
})

describe("ptc-runtime-node/tests/runtime.spec.ts: the host's Node backend end to end", () => {
  it('runs erasable TypeScript with an empty environment; no process API reveals the directory (typescript)', async () => {
    const sandboxPolicy = { mode: 'danger-full-access', workspaceRoot: WORKSPACE }
    const program = 'const n: number = 6; console.log("ready"); return { n: n * 7, env: { ...process.env }, cwd: typeof process.cwd }'
    // The host's Node program returns `process.cwd()`; an isolate has no process API beyond
    // `env`, `stdout`, `stderr` and `exit`, so the directory matters only to host functions.
    expect(await shared.typescript.run({ program, bindings: [], sandboxPolicy })).toStrictEqual({
      logs: ['ready'],
      value: { n: 42, env: {}, cwd: 'undefined' },
      sandbox: { mode: 'danger-full-access', denied: false },
    })
  })

  it('runs in the resolved directory with a private TMPDIR as its whole environment (python)', async () => {
    const sandboxPolicy = { mode: 'danger-full-access', workspaceRoot: WORKSPACE }
    const program = py('import os', 'print("ready")', 'return {"cwd": os.getcwd(), "env": dict(os.environ)}')
    const result = await shared.python.run({ program, bindings: [], sandboxPolicy })
    expect(result.logs).toEqual(['ready'])
    expect(result.sandbox).toStrictEqual({ mode: 'danger-full-access', denied: false })
    expect(result.value.cwd).toBe(WORKSPACE)
    // Only TMPDIR (CPython adds LC_CTYPE when it coerces the C locale), and it is the run's own
    // scratch directory, not the host's temporary directory.
    expect(Object.keys(result.value.env).filter((key) => key !== 'LC_CTYPE')).toEqual(['TMPDIR'])
    expect(result.value.env.TMPDIR).not.toBe(os.tmpdir())
    expect(result.value.env.TMPDIR.startsWith(`${os.tmpdir()}/code-runtime-native-python-`)).toBe(true)
  })

  both('returns binding values and preserves typed binding rejection', {
    typescript: async ({ run }) => {
      const program =
        'const value = await tools.echo({ n: 42 }); let rejected; try { await tools.fail({}) } catch (e) { rejected = [e instanceof ToolCallError, e.name, e.toolName, e.message] } return { value, rejected }'
      const bindings = tools({ echo: async (args) => args, fail: async () => { throw new Error('denied') } })
      expect(await run({ program, bindings })).toStrictEqual({ logs: [], value: { value: { n: 42 }, rejected: [true, 'ToolCallError', 'fail', 'denied'] } })
    },
    python: async ({ run }) => {
      const program = py(
        'value = await tools.echo({"n": 42})',
        'try:',
        '    await tools.fail({})',
        'except ToolCallError as e:',
        '    rejected = [isinstance(e, ToolCallError), type(e).__name__, e.toolName, str(e)]',
        'return {"value": value, "rejected": rejected}',
      )
      const bindings = tools({ echo: async (args) => args, fail: async () => { throw new Error('denied') } })
      expect(await run({ program, bindings })).toStrictEqual({ logs: [], value: { value: { n: 42 }, rejected: [true, 'ToolCallError', 'fail', 'denied'] } })
    },
  })

  both('keeps raw stdout and stderr writes in the logs', {
    typescript: async ({ run }) => {
      const program = 'process.stdout.write("native-out你好"); process.stderr.write("native-err🙂"); return 42'
      expect(await run({ program, bindings: [] })).toStrictEqual({ logs: ['native-out你好', 'native-err🙂'], value: 42 })
    },
    python: async ({ run }) => {
      const program = py('import os', 'os.write(1, "native-out你好".encode())', 'os.write(2, "native-err🙂".encode())', 'return 42')
      const result = await run({ program, bindings: [] })
      expect(result.value).toBe(42)
      expect([...result.logs].sort()).toEqual(['native-err🙂', 'native-out你好'])
    },
  })

  both('reports program failure as an exception', {
    typescript: async ({ run }) => {
      for (const program of ['throw new Error("broken")', 'enum E { A }']) {
        expect((await run({ program, bindings: [] })).error.kind).toBe('exception')
      }
    },
    python: async ({ run }) => {
      for (const program of ['raise Exception("broken")', 'def f(:']) {
        expect((await run({ program, bindings: [] })).error.kind).toBe('exception')
      }
    },
  })

  both('rejects lossy program output', {
    typescript: async ({ run }) => {
      expect(await run({ program: 'return { value: undefined }', bindings: [] })).toStrictEqual({
        logs: [],
        error: { kind: 'invalid-output', message: 'program completion must be lossless JSON' },
      })
    },
    python: async ({ run }) => {
      expect(await run({ program: 'return {"value": float("nan")}', bindings: [] })).toStrictEqual({
        logs: [],
        error: { kind: 'invalid-output', message: 'program completion must be lossless JSON (non-finite float)' },
      })
    },
  })

  it('enforces the combined output cap (typescript)', async () => {
    const { run } = await mount(IsolatePtcRuntime, { maxOutputBytes: 80 })
    const result = await run({ program: 'console.log("x".repeat(500)); return 42', bindings: [] })
    expect(result.error.kind).toBe('output-limit')
    expect('value' in result).toBe(false)
    expect(outputBytes(result)).toBeLessThanOrEqual(80)
  })

  for (const language of ['typescript', 'python']) {
    it(`uses the default deadline and caps explicit requests (${language})`, async () => {
      const { runtime } = await mount(CLASSES[language])
      expect(runtime.timeout).toEqual({ defaultMs: 120_000, maxMs: 600_000 })
      expect(runtime.resolve({ program: '', bindings: [] }).timeoutMs).toBe(120_000)
      expect(runtime.resolve({ program: '', bindings: [], timeoutMs: 900_000 }).timeoutMs).toBe(600_000)
      expect(runtime.resolve({ program: '', bindings: [], timeoutMs: null }).timeoutMs).toBeNull()
      for (const timeoutMs of [0, -1, NaN, Infinity]) {
        expect(() => runtime.resolve({ program: '', bindings: [], timeoutMs })).toThrow(/request\.timeoutMs must be a positive finite number/)
      }
      // The host's Node backend refuses a spec without a sandbox policy; ours run it, reaching no
      // file of the host (TypeScript has none; a Python child without a policy sees only its own
      // scratch directory).
      const spec = { program: 'return 1', bindings: [], cwd: WORKSPACE, timeoutMs: 1000 }
      expect(await runtime.run(spec)).toStrictEqual({ logs: [], value: 1 })
    })

    it(`advertises the capped default when the deployment maximum is lower (${language})`, async () => {
      const { runtime } = await mount(CLASSES[language], { timeoutMs: 2000, maxTimeoutMs: 1000 })
      expect(runtime.timeout).toEqual({ defaultMs: 1000, maxMs: 1000 })
      expect(runtime.resolve({ program: '', bindings: [] }).timeoutMs).toBe(runtime.timeout.defaultMs)
    })
  }

  // The host's words, then where the program was and what it was waiting on, which the host's
  // backend does not say (docs/seam.md, "A timeout says where").
  const deadline = (ms, clause = '') => ({ kind: 'timeout', message: `execution deadline reached (${ms}ms)${clause}` })

  both('ends an unfinished program at its elapsed deadline', {
    typescript: async ({ run }) => {
      expect(await run({ program: 'for (;;) {}', bindings: [], timeoutMs: 300 })).toStrictEqual({ logs: [], error: deadline(300, ' at program.ts:1:1') })
      // A program that awaits what nothing can settle ends at once here (docs/seam.md); the host's
      // Node backend waits for its deadline.
      expect(await run({ program: 'await new Promise(() => {})', bindings: [], timeoutMs: 300 })).toStrictEqual({
        logs: [],
        error: { kind: 'exception', message: 'program can never complete: it awaits a promise that nothing can settle' },
      })
    },
    python: async ({ run }) => {
      expect(await run({ program: 'while True: pass', bindings: [], timeoutMs: 300 })).toStrictEqual({ logs: [], error: deadline(300, ' at <model>:1:1') })
      const never = py('import asyncio', 'await asyncio.get_running_loop().create_future()')
      expect(await run({ program: never, bindings: [], timeoutMs: 300 })).toStrictEqual({ logs: [], error: deadline(300) })
    },
  })

  both('retains console output emitted immediately before a non-yielding program', {
    typescript: async ({ run }) => {
      const program = 'console.log("before hot loop"); for (;;) {}'
      expect(await run({ program, bindings: [], timeoutMs: 300 })).toStrictEqual({ logs: ['before hot loop'], error: deadline(300, ' at program.ts:1:33') })
    },
    python: async ({ run }) => {
      const program = py('print("before hot loop")', 'while True: pass')
      expect(await run({ program, bindings: [], timeoutMs: 300 })).toStrictEqual({ logs: ['before hot loop'], error: deadline(300, ' at <model>:2:1') })
    },
  })

  both('does not pause the deadline while a binding is pending', {
    typescript: async ({ run }) => {
      const { entered, bindings } = entering()
      const result = run({ program: 'void tools.enter({}); for (;;) {}', bindings, timeoutMs: 300 })
      await entered
      expect(await result).toStrictEqual({ logs: [], error: deadline(300, ' at program.ts:1:23; 1 tool call pending: tools.enter') })
    },
    python: async ({ run }) => {
      const { entered, bindings } = entering()
      const program = py('import asyncio', 'asyncio.ensure_future(tools.enter({}))', 'await asyncio.sleep(0)', 'while True: pass')
      const result = run({ program, bindings, timeoutMs: 300 })
      await entered
      expect(await result).toStrictEqual({ logs: [], error: deadline(300, ' at <model>:4:1; 1 tool call pending: tools.enter') })
    },
  })

  const spinAfterCall = {
    typescript: 'void tools.enter({}); for (;;) {}',
    python: py('import asyncio', 'asyncio.ensure_future(tools.enter({}))', 'await asyncio.sleep(0)', 'while True: pass'),
  }
  const waitAfterCall = {
    typescript: 'await tools.enter({}); await new Promise(() => {})',
    python: py('import time', 'await tools.enter({})', 'while True: time.sleep(0.05)'),
  }

  for (const language of ['typescript', 'python']) {
    for (const timing of [{}, { timeoutMs: null }]) {
      it(`cancels a live program with ${JSON.stringify(timing)} (${language})`, async () => {
        const { entered, bindings } = enteringAnswered()
        const controller = new AbortController()
        const active = shared[language].run({ ...timing, program: spinAfterCall[language], signal: controller.signal, bindings })
        await entered
        controller.abort('stop')
        expect(await active).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'stop' } })
      })

      it(`disposes active programs and rejects later execution with ${JSON.stringify(timing)} (${language})`, async () => {
        const { ctx, runtime, run, fiber } = await mount(CLASSES[language])
        const spec = runtime.resolve({ program: '', bindings: [] })
        const { entered, bindings } = enteringAnswered()
        const active = run({ ...timing, program: waitAfterCall[language], bindings })
        await entered
        await fiber.dispose()
        expect(await active).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'runtime disposed' } })
        await expect(runtime.run(spec)).rejects.toThrow('run() after disposal')
        expect(() => runtime.resolve({ program: '', bindings: [] })).toThrow('resolve() after disposal')
        expect(runtime.isolation).toBe(ISOLATION[language])
        expect(ctx.get('ptcRuntime')).toBeUndefined()
      })
    }
  }

  it('closes a still-running descendant before returning the program result (python)', async () => {
    const workspace = fs.mkdtempSync(path.join(WORKSPACE, 'descendant-'))
    const ready = path.join(workspace, 'ready')
    const heartbeat = path.join(workspace, 'heartbeat')
    // A child that keeps touching a file in the workspace for 30 s, well past the run. It touches the
    // heartbeat once before it says it is ready, so the run can end (and the child be killed) at any
    // point after ready and the heartbeat still exists to compare.
    const child = py('import sys, time', "open(sys.argv[2], 'w').close()", "open(sys.argv[1], 'w').close()", 'end = time.time() + 30', 'while time.time() < end:', "    open(sys.argv[2], 'w').close()", '    time.sleep(0.05)')
    const program = py(
      'import os, subprocess, sys, time',
      `subprocess.Popen([sys.executable, "-c", ${JSON.stringify(child)}, ${JSON.stringify(ready)}, ${JSON.stringify(heartbeat)}], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)`,
      'deadline = time.time() + 5',
      `while not os.path.exists(${JSON.stringify(ready)}) and time.time() < deadline:`,
      '    time.sleep(0.02)',
      `return os.path.exists(${JSON.stringify(ready)})`,
    )
    const sandboxPolicy = { mode: 'workspace-write', workspaceRoot: workspace }
    const result = await shared.python.run({ program, bindings: [], sandboxPolicy })
    expect(result).toMatchObject({ logs: [], value: true })
    const touched = fs.statSync(heartbeat).mtimeMs
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(fs.statSync(heartbeat).mtimeMs).toBe(touched)
  })

  it('applies read-only confinement to direct file writes (python)', async () => {
    const workspace = fs.mkdtempSync(path.join(WORKSPACE, 'read-only-'))
    const target = path.join(workspace, 'denied.txt')
    const program = `open(${JSON.stringify(target)}, "w").write("denied")`
    const result = await shared.python.run({ program, bindings: [], sandboxPolicy: { mode: 'read-only', workspaceRoot: workspace } })
    expect(result.error.kind).toBe('exception')
    expect(result.error.message).toMatch(/(PermissionError|OSError): \[Errno (13|30)\]/)
    expect(result.sandbox).toStrictEqual({ mode: 'read-only', denied: true, enforcement: expect.stringMatching(/^(full|partial)$/) })
    expect(fs.existsSync(target)).toBe(false)
  })

  it('has no file API to confine under a read-only policy (typescript)', async () => {
    const program = 'try { await import("node:fs") } catch (e) { return [e.name, typeof require, typeof Buffer] }'
    const sandboxPolicy = { mode: 'read-only', workspaceRoot: WORKSPACE }
    expect(await shared.typescript.run({ program, bindings: [], sandboxPolicy })).toStrictEqual({
      logs: [],
      value: ['TypeError', 'undefined', 'undefined'],
      sandbox: { mode: 'read-only', denied: false, enforcement: expect.stringMatching(/^(full|partial)$/) },
    })
  })

  it('permits workspace writes; a link to a sibling outside the workspace writes nothing there (python)', async () => {
    const root = fs.mkdtempSync(path.join(WORKSPACE, 'write-'))
    const workspace = path.join(root, 'workspace')
    const outside = path.join(root, 'outside')
    fs.mkdirSync(workspace)
    fs.mkdirSync(outside)
    const sandboxPolicy = { mode: 'workspace-write', workspaceRoot: workspace }
    const allowed = path.join(workspace, 'allowed.txt')
    const wrote = await shared.python.run({ program: py(`open(${JSON.stringify(allowed)}, "w").write("allowed")`, 'return True'), bindings: [], sandboxPolicy })
    expect(wrote).toStrictEqual({ logs: [], value: true, sandbox: { mode: 'workspace-write', denied: false, enforcement: expect.stringMatching(/^(full|partial)$/) } })
    expect(fs.readFileSync(allowed, 'utf8')).toBe('allowed')
    fs.symlinkSync(outside, path.join(workspace, 'escape'), 'dir')
    const program = `open(${JSON.stringify(path.join(workspace, 'escape', 'denied.txt'))}, "w").write("denied")`
    const escaped = await shared.python.run({ program, bindings: [], sandboxPolicy })
    // Not asserted: `sandbox.denied`. The host's backend expects true (its EACCES); here the
    // sibling is absent from the run's root, the write fails ENOENT and `denied` is false.
    // Left open in issue 28 for a decision.
    expect(escaped.error.kind).toBe('exception')
    expect(fs.readdirSync(outside)).toEqual([])
  })

  it('preserves empty console entries and bounds raw output overflow (typescript)', async () => {
    const { run } = await mount(IsolatePtcRuntime, { maxOutputBytes: 100 })
    expect(await run({ program: 'console.log("a"); console.log(""); console.log("b")', bindings: [] })).toStrictEqual({ logs: ['a', '', 'b'] })
    const overflow = await run({ program: 'process.stdout.write("HEAD-" + "x".repeat(100000))', bindings: [] })
    expect(overflow.error.kind).toBe('output-limit')
    expect(overflow.logs.join('')).toContain('HEAD-')
    expect(outputBytes(overflow)).toBeLessThanOrEqual(100)
  })
})

describe('ptc-runtime-node/tests/host-failures.spec.ts: configuration, misuse and the channel', () => {
  it('rejects deployment configuration, naming the key (typescript)', async () => {
    for (const [config, key] of [
      [{ timeoutMs: 0 }, 'timeoutMs'],
      [{ maxPendingCalls: -1 }, 'maxPendingCalls'],
      [{ maxOldGenerationSizeMb: Infinity }, 'maxOldGenerationSizeMb'],
      [{ timeoutMs: MAX_TIMER_MS + 1 }, 'timeoutMs'],
      [{ maxTimeoutMs: MAX_TIMER_MS + 1 }, 'maxTimeoutMs'],
      [{ graceMs: MAX_TIMER_MS + 1 }, 'graceMs'],
      [{ maxOutputBytes: 3 }, 'maxOutputBytes'],
      [{ maxOutputBytes: 4.5 }, 'maxOutputBytes'],
      [{ maxMessageBytes: 1.5 }, 'maxMessageBytes'],
      [{ maxMessageBytes: 0x1_0000_0000 }, 'maxMessageBytes'],
      [{ maxPendingCalls: 1.5 }, 'maxPendingCalls'],
    ]) {
      await expect(new Context().plugin(IsolatePtcRuntime, { cwd: WORKSPACE, ...config })).rejects.toThrow(key)
    }
    // The host's Node backend also refuses a fractional maxOldGenerationSizeMb (Node's flag takes
    // an integer); an isolate's heap limit is set in bytes, so ours takes one.
    const ctx = new Context()
    const fiber = await ctx.plugin(IsolatePtcRuntime, { cwd: WORKSPACE, maxOldGenerationSizeMb: 64.5 })
    expect(ctx.ptcRuntime).toBeInstanceOf(IsolatePtcRuntime)
    await fiber.dispose()
  })

  it('rejects deployment configuration, naming the key (python)', async () => {
    for (const [config, key] of [
      [{ timeoutMs: 0 }, 'timeoutMs'],
      [{ timeoutMs: MAX_TIMER_MS + 1 }, 'timeoutMs'],
      [{ maxTimeoutMs: MAX_TIMER_MS + 1 }, 'maxTimeoutMs'],
      [{ graceMs: 2_147_481_648 }, 'graceMs must not exceed 2147481647'],
      [{ maxMessageBytes: 0x1_0000_0000 }, 'maxMessageBytes'],
      [{ maxPendingCalls: -1 }, 'maxPendingCalls'],
      [{ maxPendingCalls: 1.5 }, 'maxPendingCalls'],
    ]) {
      await expect(new Context().plugin(PythonPtcRuntime, { cwd: WORKSPACE, pythonBin: PYTHON, ...config })).rejects.toThrow(key)
    }
  })

  both('rejects unsupported resolved inputs before running, and every call after disposal', {
    typescript: async (_, language) => misuse(language),
    python: async (_, language) => misuse(language),
  })

  async function misuse(language) {
    const { runtime, fiber } = await mount(CLASSES[language])
    const request = { program: 'return 1', bindings: [] }
    expect(() => runtime.resolve({ ...request, cwd: 'relative' })).toThrow('request.cwd must be the absolute path of an existing directory')
    const spec = runtime.resolve(request)
    await expect(runtime.run({ ...spec, timeoutMs: Infinity })).rejects.toThrow(/needs a resolved spec: .*spec\.timeoutMs Infinity exceeds/)
    await expect(runtime.run({ program: 'return 1', bindings: [] })).rejects.toThrow('spec.cwd is missing')
    await fiber.dispose()
    expect(() => runtime.resolve(request)).toThrow('resolve() after disposal')
    await expect(runtime.run(spec)).rejects.toThrow('run() after disposal')
  }

  both('honors an already-aborted run without calling anything', {
    typescript: async ({ run }) => {
      const calls = []
      const bindings = tools({ probe: async () => calls.push(1) })
      const result = await run({ program: 'await tools.probe({})', bindings, signal: AbortSignal.abort('already stopped') })
      expect(result).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'already stopped' } })
      expect(calls).toEqual([])
    },
    python: async ({ run }) => {
      const calls = []
      const bindings = tools({ probe: async () => calls.push(1) })
      const result = await run({ program: 'await tools.probe({})', bindings, signal: AbortSignal.abort('already stopped') })
      expect(result).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'already stopped' } })
      expect(calls).toEqual([])
    },
  })

  const wait = { wait: ({ ms }) => new Promise((resolve) => setTimeout(() => resolve(ms), ms)) }
  const waitProgram = { typescript: 'return await tools.wait({ ms: 150 })', python: 'return await tools.wait({"ms": 150})' }
  const spin = { typescript: 'await tools.enter({}); for (;;) {}', python: py('await tools.enter({})', 'while True: pass') }

  for (const language of ['typescript', 'python']) {
    it(`keeps a null-deadline run active past the numeric ceiling until it ends or is cancelled (${language})`, async () => {
      const { run, runtime } = await mount(CLASSES[language], { timeoutMs: 20, maxTimeoutMs: 40 })
      expect(runtime.timeout).toEqual({ defaultMs: 20, maxMs: 40 })
      expect(await run({ program: waitProgram[language], bindings: tools(wait), timeoutMs: null })).toStrictEqual({ logs: [], value: 150 })
      const { entered, bindings } = enteringAnswered()
      const controller = new AbortController()
      const active = run({ program: spin[language], bindings, timeoutMs: null, signal: controller.signal })
      await entered
      await new Promise((resolve) => setTimeout(resolve, 100))
      controller.abort('stop unlimited run')
      expect(await active).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'stop unlimited run' } })
    })
  }

  both('never reaches a prototype member through an undeclared name', {
    typescript: async ({ run }) => {
      const program = 'return [typeof tools.constructor, typeof tools.toString, Object.getPrototypeOf(tools) === null]'
      expect(await run({ program, bindings: tools({ test: async () => null }) })).toStrictEqual({ logs: [], value: ['undefined', 'undefined', true] })
    },
    python: async ({ run }) => {
      const program = py('try:', '    tools.constructor', 'except AttributeError as e:', '    return str(e)')
      expect(await run({ program, bindings: tools({ test: async () => null }) })).toStrictEqual({
        logs: [],
        value: "tool 'constructor' is not declared in namespace 'tools'",
      })
    },
  })

  const twoPending = {
    typescript: 'const a = tools.test({ s: "a".repeat(300) }); const b = tools.test({ s: "b".repeat(300) }); await a; await b',
    python: py(
      'import asyncio',
      'a = asyncio.ensure_future(tools.test({"s": "a" * 300}))',
      'b = asyncio.ensure_future(tools.test({"s": "b" * 300}))',
      'await a',
      'await b',
    ),
  }
  for (const language of ['typescript', 'python']) {
    for (const [config, message] of [
      [{ maxPendingCalls: 1 }, /^more than 1 binding calls were pending at once \(maxPendingCalls\)/],
      [{ maxMessageBytes: 512 }, /the binding calls in flight carry \d+ bytes of arguments, more than maxMessageBytes \(512\)/],
    ]) {
      it(`bounds unresolved host calls with ${JSON.stringify(config)} (${language})`, async () => {
        const { run } = await mount(CLASSES[language], config)
        let calls = 0
        const bindings = tools({ test: () => (calls++, new Promise(() => {})) })
        const result = await run({ program: twoPending[language], bindings })
        expect(result).toStrictEqual({ logs: [], error: { kind: 'protocol', message: expect.stringMatching(message) } })
        // TypeScript: the second call never reaches the host; whether the first did depends on
        // when the host took it before the run ended (docs/budgets-and-ledger.md). Python: the
        // count is not asserted, as the calls of one batch are dispatched before the cap is
        // checked (two calls here); left open in issue 28.
        if (language === 'typescript') expect(calls).toBeLessThanOrEqual(1)
      })
    }
  }

  both('returns a non-lossless binding resolution as a failure the program sees', {
    typescript: async ({ run }) => {
      const program = 'try { await tools.test({}); return "resolved" } catch (e) { return [e.name, e.message] }'
      expect(await run({ program, bindings: tools({ test: async () => Number.NaN }) })).toStrictEqual({
        logs: [],
        value: ['ToolCallError', 'binding resolution must be lossless JSON'],
      })
    },
    python: async ({ run }) => {
      const program = py('try:', '    await tools.test({})', '    return "resolved"', 'except ToolCallError as e:', '    return str(e)')
      const result = await run({ program, bindings: tools({ test: async () => Number.NaN }) })
      expect(result.value).toMatch(/^binding resolution must be lossless JSON/)
    },
  })

  const lateReply = {
    typescript:
      'void tools.echo({}).then(() => { throw new Error("late reply resumed the program") }); await tools.sync({}); setTimeout(() => console.log("late timer"), 0); return 42',
    python: py(
      'import asyncio',
      'async def resumed():',
      '    await tools.echo({})',
      '    print("late reply resumed the program")',
      'asyncio.ensure_future(resumed())',
      'await asyncio.sleep(0)',
      'await tools.sync({})',
      'return 42',
    ),
  }
  for (const language of ['typescript', 'python']) {
    it(`does not let a late binding reply reach a settled program (process-main.spec.ts too) (${language})`, async () => {
      const release = deferred()
      const calls = []
      const bindings = tools({
        echo: async () => (calls.push('echo'), await release.promise, 42),
        sync: async () => (calls.push('sync'), null),
      })
      // `sync` is answered once the host took `echo` (calls arrive in order); the run settles
      // while `echo` is still pending, and its answer comes after.
      expect(await shared[language].run({ program: lateReply[language], bindings })).toStrictEqual({ logs: [], value: 42 })
      expect(calls).toEqual(['echo', 'sync'])
      release.resolve()
      await new Promise((resolve) => setTimeout(resolve, 50))
    })
  }

  for (const language of ['typescript', 'python']) {
    it(`bounds binding traffic only with maxMessageBytes: a reply past it ends the run, a program never counts (${language})`, async () => {
      // The host's Node backend sends the program itself as a frame under this cap, so a 32-byte
      // cap fails every run there; here it bounds binding arguments and replies only.
      const { run } = await mount(CLASSES[language], { maxMessageBytes: 32 })
      const booted = language === 'typescript' ? 'console.log("booted"); return "x".repeat(100)' : py('print("booted")', 'return "x" * 100')
      expect(await run({ program: booted, bindings: [] })).toStrictEqual({ logs: ['booted'], value: 'x'.repeat(100) })
      const program = language === 'typescript'
        ? 'try { return await tools.test({}) } catch (e) { return "caught" }'
        : py('try:', '    return await tools.test({})', 'except Exception:', '    return "caught"')
      expect(await run({ program, bindings: tools({ test: async () => 'x'.repeat(512) }) })).toStrictEqual({
        logs: [],
        error: { kind: 'protocol', message: expect.stringContaining("a binding's reply is 514 bytes of JSON, more than maxMessageBytes (32)") },
      })
    })
  }

  it('retains admitted logs when the run ends at its output limit (typescript)', async () => {
    const { run } = await mount(IsolatePtcRuntime, { maxOutputBytes: 64 })
    const result = await run({ program: 'console.log("retained"); console.log("x".repeat(200))', bindings: [] })
    expect(result.error.kind).toBe('output-limit')
    expect(result.logs[0]).toBe('retained')
    expect(outputBytes(result)).toBeLessThanOrEqual(64)
  })

  it('retains admitted logs when the value passes its limit (python)', async () => {
    const { run } = await mount(PythonPtcRuntime, { maxValueBytes: 64 })
    expect(await run({ program: py('print("retained")', 'return "x" * 200'), bindings: [] })).toStrictEqual({
      logs: ['retained'],
      error: { kind: 'output-limit', message: 'completion value exceeded 64 bytes' },
    })
  })

  it('keeps stderr and names the exit when the process ends without completing (python)', async () => {
    const program = py('import os', 'os.write(2, b"native fatal detail\\n")', 'os._exit(9)')
    expect(await shared.python.run({ program, bindings: [] })).toStrictEqual({
      logs: ['native fatal detail'],
      error: { kind: 'worker-exit', message: 'python exited (code=9, signal=null) before completing' },
    })
  })
})

describe('ptc-runtime-node/tests/bootstrap.spec.ts: the program side', () => {
  it('streams log entries until the byte budget, then ends the run at the limit (typescript)', async () => {
    for (const [cap, program, admitted] of [
      [15, 'console.log("12345"); console.log("123456"); console.log("dropped")', ['12345', '123']],
      [6, 'console.log("12"); console.log("no-prefix-fits")', ['12']],
    ]) {
      const { run } = await mount(IsolatePtcRuntime, { maxOutputBytes: cap })
      const result = await run({ program, bindings: [] })
      expect(result.error.kind).toBe('output-limit')
      expect(outputBytes(result)).toBeLessThanOrEqual(cap)
      // The limit result keeps what fits beside its message: a prefix of what was admitted.
      expect(admitted.slice(0, result.logs.length)).toEqual(result.logs)
    }
  })

  it('captures the five console methods and renders non-strings inspect-style (typescript)', async () => {
    const program = 'console.log("plain", { a: 1 }); console.info("i"); console.warn("w"); console.error("e"); console.debug("d")'
    expect(await shared.typescript.run({ program, bindings: [] })).toStrictEqual({ logs: ['plain { a: 1 }', 'i', 'w', 'e', 'd'] })
  })

  it('invokes stream write callbacks asynchronously, in both optional-encoding shapes (typescript)', async () => {
    const program =
      'const calls = []; process.stdout.write("two-arg", (e) => calls.push(e)); process.stderr.write("three-arg", "utf8", (e) => calls.push(e)); const sync = calls.length; await new Promise((r) => process.stdout.write("awaited flush", r)); return { sync, calls }'
    expect(await shared.typescript.run({ program, bindings: [] })).toStrictEqual({
      logs: ['two-arg', 'three-arg', 'awaited flush'],
      value: { sync: 0, calls: [null, null] },
    })
  })

  both('omits undefined and passes lossless JSON values exactly', {
    typescript: async ({ run }) => {
      expect(await run({ program: 'return undefined', bindings: [] })).toStrictEqual({ logs: [] })
      expect(await run({ program: 'return { a: [1, "two"] }', bindings: [] })).toStrictEqual({ logs: [], value: { a: [1, 'two'] } })
    },
    python: async ({ run }) => {
      for (const program of ['return None', 'x = 1']) expect(await run({ program, bindings: [] })).toStrictEqual({ logs: [], value: null })
      expect(await run({ program: 'return {"a": [1, "two"]}', bindings: [] })).toStrictEqual({ logs: [], value: { a: [1, 'two'] } })
    },
  })

  it('turns every lossy completion shape into invalid-output (typescript)', async () => {
    for (const value of [
      '{ fn: () => 1 }',
      '-0',
      'Number.POSITIVE_INFINITY',
      'Array(2)',
      '(() => { const cyclic = {}; cyclic.self = cyclic; return cyclic })()',
      'new (class Exotic { marker = true })()',
      'Object.defineProperty({}, "x", { enumerable: true, get() { throw new Error("getter exploded") } })',
    ]) {
      expect(await shared.typescript.run({ program: `return ${value}`, bindings: [] })).toStrictEqual({
        logs: [],
        error: { kind: 'invalid-output', message: 'program completion must be lossless JSON' },
      })
    }
  })

  it('measures the exact JSON serialization at and over the boundary (typescript)', async () => {
    // The host's unit meters the value against what remains beside the logs ('€' fits 5 bytes,
    // not 4); end to end the empty logs' `[]` takes 2 of the budget, so the boundary is 7 and 6.
    const fits = await mount(IsolatePtcRuntime, { maxOutputBytes: 7 })
    expect(await fits.run({ program: 'return "€"', bindings: [] })).toStrictEqual({ logs: [], value: '€' })
    const over = await mount(IsolatePtcRuntime, { maxOutputBytes: 6 })
    expect((await over.run({ program: 'return "€"', bindings: [] })).error.kind).toBe('output-limit')
  })

  it('reports an oversized value, and a diagnostic past the budget, as output-limit (typescript)', async () => {
    const { run } = await mount(IsolatePtcRuntime, { maxOutputBytes: 10 })
    for (const program of ['return "x".repeat(50)', 'return () => 1']) {
      const result = await run({ program, bindings: [] })
      expect(result.error.kind).toBe('output-limit')
      expect(outputBytes(result)).toBeLessThanOrEqual(10)
    }
  })

  it('renders thrown values: raw, stack-less, odd stacks and unrenderable ones (typescript)', async () => {
    for (const [program, message] of [
      ['throw "raw-throw"', 'raw-throw'],
      ['const e = new Error("bare"); e.stack = undefined; throw e', 'bare'],
      ['const e = new Error("ignored"); Object.defineProperty(e, "stack", { value: 42 }); throw e', '42'],
      ['throw { toString() { throw new Error("cannot render") } }', 'program threw an unrenderable value'],
    ]) {
      expect(await shared.typescript.run({ program, bindings: [] })).toStrictEqual({ logs: [], error: { kind: 'exception', message } })
    }
  })

  it('replaces giant thrown strings and Error stacks with the output limit (typescript)', async () => {
    const { run } = await mount(IsolatePtcRuntime, { maxOutputBytes: 64 })
    for (const program of ['throw "x".repeat(1_000_000)', 'throw new Error("x".repeat(1_000_000))']) {
      expect(await run({ program, bindings: [] })).toStrictEqual({
        logs: [],
        error: { kind: 'output-limit', message: 'outer output exceeded 64 bytes' },
      })
    }
    const tiny = await mount(IsolatePtcRuntime, { maxOutputBytes: 4 })
    const result = await tiny.run({ program: 'console.log("12345"); return null', bindings: [] })
    expect(result).toStrictEqual({ logs: [], error: { kind: 'output-limit', message: '' } })
  })

  both('exposes prototype-colliding names as ordinary own properties', {
    typescript: async ({ run }) => {
      const functions = Object.create(null)
      for (const name of ['__proto__', 'constructor', 'toString']) functions[name] = async () => `${name}-ok`
      const program =
        'return [Object.getPrototypeOf(tools) === null, await tools["__proto__"]({}), await tools.constructor({}), await tools.toString({})]'
      expect(await run({ program, bindings: [{ global: 'tools', functions }] })).toStrictEqual({
        logs: [],
        value: [true, '__proto__-ok', 'constructor-ok', 'toString-ok'],
      })
    },
    python: async ({ run }) => {
      const functions = Object.create(null)
      for (const name of ['__proto__', 'constructor', 'toString']) functions[name] = async () => `${name}-ok`
      const program = 'return [await tools["__proto__"]({}), await tools.constructor({}), await tools.toString({})]'
      expect(await run({ program, bindings: [{ global: 'tools', functions }] })).toStrictEqual({
        logs: [],
        value: ['__proto__-ok', 'constructor-ok', 'toString-ok'],
      })
    },
  })

  both('rejects lossy arguments before the host is called', {
    typescript: async ({ run }) => {
      const calls = []
      const program =
        'const decorated = [1]; Object.defineProperty(decorated, "extra", { value: true }); const throwing = Object.defineProperty({}, "value", { enumerable: true, get: () => { throw new Error("getter exploded") } }); const out = []; for (const value of [() => 1, new Date(), decorated, throwing]) { try { await tools.x(value) } catch (e) { out.push([e instanceof ToolCallError, e.toolName, e.message]) } } return out'
      const result = await run({ program, bindings: tools({ x: async () => calls.push(1) }) })
      expect(result).toStrictEqual({ logs: [], value: Array(4).fill([true, 'x', 'binding arguments must be lossless JSON']) })
      expect(calls).toEqual([])
    },
    python: async ({ run }) => {
      const calls = []
      const program = py(
        'out = []',
        'for value in [lambda: 1, {1, 2}, float("inf"), {1: "x"}, (1, 2)]:',
        '    try:',
        '        await tools.x(value)',
        '    except ToolCallError as e:',
        '        out.append([e.toolName, str(e).startswith("binding arguments must be lossless JSON (")])',
        'return out',
      )
      const result = await run({ program, bindings: tools({ x: async () => calls.push(1) }) })
      expect(result).toStrictEqual({ logs: [], value: Array(5).fill(['x', true]) })
      expect(calls).toEqual([])
    },
  })

  both('uses an ordinary error for a namespace without an error class', {
    typescript: async ({ run }) => {
      const program = 'try { await helpers.x({}) } catch (e) { return [e instanceof Error, e.name, e.message, "toolName" in e] }'
      const bindings = [{ global: 'helpers', functions: { x: async () => { throw new Error('helper denied') } } }]
      expect(await run({ program, bindings })).toStrictEqual({ logs: [], value: [true, 'Error', 'helper denied', false] })
    },
    python: async ({ run }) => {
      const program = py('try:', '    await helpers.x({})', 'except RuntimeError as e:', '    return [type(e).__name__, str(e), hasattr(e, "toolName")]')
      const bindings = [{ global: 'helpers', functions: { x: async () => { throw new Error('helper denied') } } }]
      expect(await run({ program, bindings })).toStrictEqual({ logs: [], value: ['RuntimeError', 'helper denied', false] })
    },
  })

  both('runs a program end to end: bindings, console, return value', {
    typescript: async ({ run }) => {
      const program = 'const doubled = await tools.double({ n: 21 }); console.log("got", doubled); return { doubled }'
      expect(await run({ program, bindings: tools({ double: async ({ n }) => n * 2 }) })).toStrictEqual({ logs: ['got 42'], value: { doubled: 42 } })
    },
    python: async ({ run }) => {
      const program = py('doubled = await tools.double({"n": 21})', 'print("got", doubled)', 'return {"doubled": doubled}')
      expect(await run({ program, bindings: tools({ double: async ({ n }) => n * 2 }) })).toStrictEqual({ logs: ['got 42'], value: { doubled: 42 } })
    },
  })

  both('materializes a consumer-declared rejection class without knowing the namespace', {
    typescript: async ({ run }) => {
      const program =
        'try { await helpers.x({}) } catch (error) { return { caught: error instanceof HelperCallError, name: error.name, helperName: error.helperName, message: error.message } }'
      const errorClass = { name: 'HelperCallError', memberNameProperty: 'helperName' }
      const bindings = [{ global: 'helpers', functions: { x: async () => { throw new Error('helper denied') } }, errorClass }]
      expect(await run({ program, bindings })).toStrictEqual({
        logs: [],
        value: { caught: true, name: 'HelperCallError', helperName: 'x', message: 'helper denied' },
      })
    },
    python: async ({ run }) => {
      const program = py(
        'try:',
        '    await helpers.x({})',
        'except HelperCallError as error:',
        '    return {"caught": isinstance(error, HelperCallError), "name": type(error).__name__, "helperName": error.helperName, "message": str(error)}',
      )
      const errorClass = { name: 'HelperCallError', memberNameProperty: 'helperName' }
      const bindings = [{ global: 'helpers', functions: { x: async () => { throw new Error('helper denied') } }, errorClass }]
      expect(await run({ program, bindings })).toStrictEqual({
        logs: [],
        value: { caught: true, name: 'HelperCallError', helperName: 'x', message: 'helper denied' },
      })
    },
  })
})

describe('ptc-runtime-node/tests/output-ledger.spec.ts: the output budget', () => {
  it('accounts for exact JSON escaping, separators and optional completion values (typescript)', async () => {
    const { run } = await mount(IsolatePtcRuntime, { maxOutputBytes: 20 })
    const logged = 'console.log("first"); console.log("second");'
    // `["first","second"]` is 18 bytes: room for `1`, not for a third entry or `"too long"`.
    expect(await run({ program: logged, bindings: [] })).toStrictEqual({ logs: ['first', 'second'] })
    expect(await run({ program: `${logged} return 1`, bindings: [] })).toStrictEqual({ logs: ['first', 'second'], value: 1 })
    for (const program of [`${logged} console.log("third")`, `${logged} return "too long"`]) {
      const result = await run({ program, bindings: [] })
      expect(result.error.kind).toBe('output-limit')
      expect(outputBytes(result)).toBeLessThanOrEqual(20)
    }
  })

  it('retains a bounded prefix when logs or a failure diagnostic exceed the limit (typescript)', async () => {
    for (const cap of [4, 8, 40, 80]) {
      const { run } = await mount(IsolatePtcRuntime, { maxOutputBytes: cap })
      const result = await run({ program: 'console.log("a"); console.log("b"); console.log("你好🙂".repeat(50))', bindings: [] })
      expect(result.error.kind).toBe('output-limit')
      expect(outputBytes(result)).toBeLessThanOrEqual(cap)
    }
    const { run } = await mount(IsolatePtcRuntime, { maxOutputBytes: 80 })
    expect(await run({ program: 'throw "short"', bindings: [] })).toStrictEqual({ logs: [], error: { kind: 'exception', message: 'short' } })
    expect((await run({ program: 'throw "x".repeat(100)', bindings: [] })).error.kind).toBe('output-limit')
  })
})

describe('ptc-runtime-node/tests/json-wire.spec.ts: lossless JSON across the binding boundary', () => {
  const echoBack = { typescript: 'return await tools.value({})', python: 'return await tools.value({})' }

  both('detaches shared references, dense arrays and null-prototype records', {
    typescript: async ({ run }) => {
      const shared = { value: 1 }
      const nullPrototype = Object.assign(Object.create(null), { shared })
      const source = { list: [nullPrototype, shared], alias: shared }
      const program = 'const r = await tools.value({}); r.list[1].value = 5; return [r, r.alias.value, r.list[0].shared.value]'
      const result = await run({ program, bindings: tools({ value: async () => source }) })
      expect(result.value).toEqual([{ list: [{ shared: { value: 1 } }, { value: 5 }], alias: { value: 1 } }, 1, 1])
      expect(shared.value).toBe(1)
    },
    python: async ({ run }) => {
      const shared = { value: 1 }
      const source = { list: [Object.assign(Object.create(null), { shared }), shared], alias: shared }
      const program = py('r = await tools.value({})', 'r["list"][1]["value"] = 5', 'return [r["alias"]["value"], r["list"][0]["shared"]["value"]]')
      expect(await run({ program, bindings: tools({ value: async () => source }) })).toStrictEqual({ logs: [], value: [1, 1] })
      expect(shared.value).toBe(1)
    },
  })

  for (const language of ['typescript', 'python']) {
    it(`accepts intrinsic plain containers from another JavaScript realm (${language})`, async () => {
      const foreign = vm.runInNewContext('({ object: { nested: [1] }, array: [2, { ok: true }] })')
      const result = await shared[language].run({ program: echoBack[language], bindings: tools({ value: async () => foreign }) })
      expect(result).toStrictEqual({ logs: [], value: { object: { nested: [1] }, array: [2, { ok: true }] } })
    })
  }

  both('reads each accepted slot once and preserves a literal __proto__ key', {
    typescript: async ({ run }) => {
      const { value, reads } = readOnce()
      const program = 'const v = await tools.value({}); return [Object.getPrototypeOf(v[0]) === Object.prototype, Object.hasOwn(v[0], "__proto__"), v[0]["__proto__"]]'
      expect(await run({ program, bindings: tools({ value: async () => value }) })).toStrictEqual({ logs: [], value: [true, true, { safe: true }] })
      expect(reads).toEqual({ object: 1, array: 1 })
    },
    python: async ({ run }) => {
      const { value, reads } = readOnce()
      const program = py('v = await tools.value({})', 'return [list(v[0].keys()), v[0]["__proto__"]]')
      expect(await run({ program, bindings: tools({ value: async () => value }) })).toStrictEqual({ logs: [], value: [['__proto__'], { safe: true }] })
      expect(reads).toEqual({ object: 1, array: 1 })
    },
  })

  /** The host's case: an array slot and a `__proto__` key behind getters that count their reads. */
  function readOnce() {
    const reads = { object: 0, array: 0 }
    const source = Object.create(null)
    Object.defineProperty(source, '__proto__', { enumerable: true, get: () => (reads.object++, { safe: true }) })
    const value = new Array(1)
    Object.defineProperty(value, 0, { enumerable: true, get: () => (reads.array++, reads.array === 1 ? source : undefined) })
    return { value, reads }
  }

  both('carries deeply nested valid JSON (5000 levels) both ways', {
    typescript: async ({ run }) => {
      let deep = 'leaf'
      for (let depth = 0; depth < 5000; depth++) deep = [deep]
      const program = 'let v = await tools.value({}); let depth = 0; while (Array.isArray(v)) { v = v[0]; depth++ } return [depth, v]'
      expect(await run({ program, bindings: tools({ value: async () => deep }) })).toStrictEqual({ logs: [], value: [5000, 'leaf'] })
    },
    python: async ({ run }) => {
      let deep = 'leaf'
      for (let depth = 0; depth < 5000; depth++) deep = [deep]
      const program = py('v = await tools.value({})', 'depth = 0', 'while isinstance(v, list):', '    v = v[0]', '    depth += 1', 'return [depth, v]')
      expect(await run({ program, bindings: tools({ value: async () => deep }) })).toStrictEqual({ logs: [], value: [5000, 'leaf'] })
    },
  })

  /** The host's rejected shapes, each a resolution the program must see refused. */
  function exotic() {
    class ExoticObject { value = 1 }
    class ExoticArray extends Array {}
    const cyclic = {}
    cyclic.self = cyclic
    const decorated = [1]
    Object.defineProperty(decorated, 'extra', { value: true })
    const symbolDecorated = [1]
    Object.defineProperty(symbolDecorated, Symbol('extra'), { value: true })
    const customPrototype = Object.assign(Object.create(Object.create(null)), { value: 1 })
    const forgedArray = [1]
    Object.setPrototypeOf(forgedArray, Object.setPrototypeOf([], null))
    return [
      new ExoticObject(),
      new Map([['value', 1]]),
      new ExoticArray(1),
      new Array(1),
      decorated,
      symbolDecorated,
      Object.defineProperty({}, 'hidden', { value: true }),
      { [Symbol('extra')]: true },
      customPrototype,
      forgedArray,
      cyclic,
      [undefined],
      { value: undefined },
      Object.defineProperty({}, 'value', { enumerable: true, get: () => { throw new Error('getter failed') } }),
    ]
  }

  both('refuses exotic containers, sparse arrays, cycles, invalid children and throwing getters', {
    typescript: async ({ run }) => {
      const values = exotic()
      const program = `const out = []; for (let i = 0; i < ${values.length}; i++) { try { await tools.value(i); out.push("accepted") } catch (e) { out.push(e.message) } } return out`
      const result = await run({ program, bindings: tools({ value: async (i) => values[i] }) })
      expect(result).toStrictEqual({ logs: [], value: Array(values.length).fill('binding resolution must be lossless JSON') })
    },
    python: async ({ run }) => {
      const values = exotic()
      const program = py(
        'out = []',
        `for i in range(${values.length}):`,
        '    try:',
        '        await tools.value(i)',
        '        out.append("accepted")',
        '    except ToolCallError as e:',
        '        out.append(str(e).startswith("binding resolution must be lossless JSON"))',
        'return out',
      )
      const result = await run({ program, bindings: tools({ value: async (i) => values[i] }) })
      expect(result).toStrictEqual({ logs: [], value: Array(values.length).fill(true) })
    },
  })
})

describe('ptc-runtime-node/tests/built-lib.e2e.ts: a typed program with a binding', () => {
  both('runs a program with a binding through the package entry', {
    typescript: async ({ run }) => {
      const program =
        'const doubled: number = await tools.double({ n: 21 }); console.log("halfway", doubled); let failure; try { await tools.fail({}) } catch (error) { failure = { typed: error instanceof ToolCallError, name: error.name, toolName: error.toolName, message: error.message } } return { doubled, failure };'
      const bindings = tools({ double: async (args) => args.n * 2, fail: async () => { throw new Error('denied') } })
      expect(await run({ program, bindings })).toStrictEqual({
        logs: ['halfway 42'],
        value: { doubled: 42, failure: { typed: true, name: 'ToolCallError', toolName: 'fail', message: 'denied' } },
      })
    },
    python: async ({ run }) => {
      const program = py(
        'doubled: int = await tools.double({"n": 21})',
        'print("halfway", doubled)',
        'try:',
        '    await tools.fail({})',
        'except ToolCallError as error:',
        '    failure = {"typed": isinstance(error, ToolCallError), "name": type(error).__name__, "toolName": error.toolName, "message": str(error)}',
        'return {"doubled": doubled, "failure": failure}',
      )
      const bindings = tools({ double: async (args) => args.n * 2, fail: async () => { throw new Error('denied') } })
      expect(await run({ program, bindings })).toStrictEqual({
        logs: ['halfway 42'],
        value: { doubled: 42, failure: { typed: true, name: 'ToolCallError', toolName: 'fail', message: 'denied' } },
      })
    },
  })
})

describe("experimental/ptc-runtime-python/tests/runtime.spec.ts: the host's Python backend", () => {
  const run = (program, bindings = [], extra = {}) => shared.python.run({ program, bindings, ...extra })
  const echo = tools({ echo: async (args) => args })
  const lossless = (reason) => ({ logs: [], error: { kind: 'invalid-output', message: `program completion must be lossless JSON (${reason})` } })

  it('resolves its configured cwd and deadline, and takes what the host refuses: a per-call deadline and a policy', async () => {
    const { runtime } = await mount(PythonPtcRuntime, { timeoutMs: 30_000 })
    const request = { program: 'import os\nreturn os.getcwd()', bindings: [] }
    expect(runtime.resolve(request)).toEqual({ ...request, cwd: WORKSPACE, timeoutMs: 30_000 })
    const cwd = fs.mkdtempSync(path.join(WORKSPACE, 'resolved-cwd-'))
    expect(runtime.resolve({ ...request, cwd }).cwd).toBe(cwd)
    expect(() => runtime.resolve({ ...request, cwd: 'relative' })).toThrow('request.cwd must be the absolute path')
    // The host's experimental backend refuses both; a ctx.ptcRuntime deadline and policy are the
    // seam's, so ours takes them.
    expect(runtime.resolve({ ...request, timeoutMs: 1 }).timeoutMs).toBe(1)
    expect(runtime.resolve({ ...request, timeoutMs: null }).timeoutMs).toBeNull()
    const sandboxPolicy = { mode: 'read-only', workspaceRoot: cwd }
    expect(runtime.resolve({ ...request, sandboxPolicy }).sandboxPolicy).toEqual(sandboxPolicy)
    // Under a policy the child starts in the resolved directory. Without one it reaches no host
    // directory at all and starts in its own scratch directory (the host's starts in `cwd`).
    expect((await runtime.run(runtime.resolve({ ...request, cwd, sandboxPolicy }))).value).toBe(cwd)
    const bare = await runtime.run(runtime.resolve({ ...request, cwd }))
    expect(bare.value).not.toBe(cwd)
    expect(bare.value).toMatch(/\/code-runtime-native-python-[^/]+\/tmp$/)
  })

  it('rejects configuration that cannot work at load', async () => {
    const directory = fs.mkdtempSync(path.join(WORKSPACE, 'not-python-'))
    for (const [config, message] of [
      [{ cpuSeconds: 0 }, /cpuSeconds must be a positive number/],
      [{ cpuSeconds: 1.5 }, /cpuSeconds must be a positive integer, got 1\.5/],
      [{ maxLogBytes: 3.5 }, /maxLogBytes must be a positive integer/],
      [{ maxValueBytes: 1024.5 }, /maxValueBytes must be a positive integer/],
      [{ maxLogBytes: 63 }, /maxLogBytes must be at least 64/],
      [{ pythonBin: '' }, /pythonBin must be a non-empty path without NUL bytes/],
      [{ pythonBin: 'py\u0000thon3' }, /pythonBin must be a non-empty path without NUL bytes/],
      [{ pythonBin: directory }, /is not an executable regular file/],
      [{ pythonBin: '/bin/echo' }, /did not report a CPython version/],
      [{ pythonBin: 'definitely-no-such-python-xyz' }, /does not resolve on PATH/],
      [{ graceMs: 2_147_481_648 }, /graceMs must not exceed 2147481647/],
    ]) {
      await expect(new Context().plugin(PythonPtcRuntime, { cwd: WORKSPACE, pythonBin: PYTHON, ...config })).rejects.toThrow(message)
    }
  })

  it('reads binding members once: a throwing getter is misuse, __proto__ and __class__ are callable', async () => {
    const exploding = { get explode() { throw new Error('getter blew up') } }
    await expect(run('return 1', [{ global: 'tools', functions: exploding }])).rejects.toThrow('getter blew up')
    let reads = 0
    const counted = { get first() { reads++; return async () => 1 } }
    expect(await run('return await tools.first({})', [{ global: 'tools', functions: counted }])).toStrictEqual({ logs: [], value: 1 })
    expect(reads).toBe(1)
    const functions = Object.create(null)
    functions.__proto__ = async () => 'proto-callable'
    functions.__class__ = async () => 'bridged'
    const program = py('a = await tools["__proto__"]({})', 'b = await tools["__class__"]({})', 'c = await tools.__class__({})', 'return [a, b, c]')
    expect(await run(program, [{ global: 'tools', functions }])).toStrictEqual({ logs: [], value: ['proto-callable', 'bridged', 'bridged'] })
  })

  it("refuses globals and error classes in the host Python backend's words", async () => {
    const cases = [
      [{ global: '1bad' }, 'binding global "1bad" is not a usable Python identifier'],
      [{ global: 'class' }, 'binding global "class" is not a usable Python identifier'],
      [{ global: 'typeof' }, 'binding global "typeof" is not a usable Python identifier'],
      [{ global: '__dsh_main__' }, 'binding global "__dsh_main__" collides with a runtime-owned global'],
      [{ global: 'console' }, 'binding global "console" collides with a runtime-owned global'],
      [{ global: '__debug__' }, 'binding global "__debug__" collides with a runtime-owned global'],
      [{ global: 'tools', errorClass: { name: 'tools', memberNameProperty: 'toolName' } }, 'binding global "tools" collides with another injected global'],
      [{ global: 'tools', errorClass: { name: 'class', memberNameProperty: 'toolName' } }, 'errorClass.name "class" is not a usable Python identifier'],
      [{ global: 'tools', errorClass: { name: 'E', memberNameProperty: '' } }, 'errorClass.memberNameProperty must be a non-empty attribute name'],
    ]
    for (const member of ['__traceback__', '__dict__', '__class__', 'args', 'name', 'message', 'stack']) {
      cases.push([{ global: 'tools', errorClass: { name: 'E', memberNameProperty: member } }, `errorClass.memberNameProperty "${member}" is a reserved error member and cannot be assigned`])
    }
    for (const [namespace, message] of cases) {
      await expect(run('return 1', [{ functions: {}, ...namespace }])).rejects.toThrow(`code-runtime-native: ${message}`)
    }
    await expect(run('return 1', [{ global: 'tools', functions: {} }, { global: 'tools', functions: {} }])).rejects.toThrow('duplicate binding global "tools"')
    const hyphen = [{ global: 'tools', functions: { boom: async () => { throw new Error('nope') } }, errorClass: { name: 'ToolCallError', memberNameProperty: 'tool-name' } }]
    const caught = py('try:', '    await tools.boom({})', 'except ToolCallError as e:', '    return getattr(e, "tool-name")')
    expect(await run(caught, hyphen)).toStrictEqual({ logs: [], value: 'boom' })
  })

  it('settles every abort: unconvertible reasons, an abort in the same turn, and mid-flight', async () => {
    const unconvertible = () => ({ [Symbol.toPrimitive]() { throw new Error('reason blew up') } })
    expect(await run('return 1', [], { signal: AbortSignal.abort(unconvertible()) })).toStrictEqual({
      logs: [],
      error: { kind: 'abort', message: '<unrenderable rejection value>' },
    })
    const sameTurn = new AbortController()
    const pending = run(py('import time', 'while True: time.sleep(0.1)'), [], { signal: sameTurn.signal })
    sameTurn.abort('same-turn-abort')
    expect(await pending).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'same-turn-abort' } })
    const { entered, bindings } = enteringAnswered()
    const midFlight = new AbortController()
    const active = run(py('import time', 'await tools.enter({})', 'while True: time.sleep(0.1)'), bindings, { signal: midFlight.signal })
    await entered
    midFlight.abort(unconvertible())
    expect(await active).toStrictEqual({ logs: [], error: { kind: 'abort', message: '<unrenderable rejection value>' } })
  })

  it('settles a run whose runtime is disposed in the same turn, as abort', async () => {
    const { runtime, fiber } = await mount(PythonPtcRuntime)
    const pending = runtime.run(runtime.resolve({ program: py('import time', 'while True: time.sleep(0.1)'), bindings: [] }))
    const disposed = fiber.dispose()
    expect(await pending).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'runtime disposed' } })
    await disposed
  })

  it('captures print output line by line: arguments coalesced, partial lines flushed, raw writes split', async () => {
    expect(await run(py('x = 40', 'y = 2', 'print("hello", x + y)', 'return {"answer": x + y}'))).toStrictEqual({ logs: ['hello 42'], value: { answer: 42 } })
    expect(await run(py('print("a", "b")', 'print("c")', 'print("partial", end="")'))).toStrictEqual({ logs: ['a b', 'c', 'partial'], value: null })
    expect(await run(py('import os', 'os.write(1, b"one\\ntwo\\nthree")'))).toStrictEqual({ logs: ['one', 'two', 'three'], value: null })
    expect(await run(py("print('a', end='', flush=True)", "print('b')", 'return "done"'))).toStrictEqual({ logs: ['ab'], value: 'done' })
    expect(await run(py('import sys', 'data = sys.stdin.read()', 'return "read: " + repr(data)'))).toStrictEqual({ logs: [], value: "read: ''" })
    expect(await run(py('def f(x: int) -> int:', '    return x', 'return f.__annotations__["x"].__name__'))).toStrictEqual({ logs: [], value: 'int' })
  })

  it('marks truncated logs with our own marker', async () => {
    const { run: limited } = await mount(PythonPtcRuntime, { maxLogBytes: 64 })
    // The host's marker names its package (`[dsh-ptc-runtime-python] …`); ours names this one.
    expect(await limited({ program: py("print('committed', end='', flush=True)", "print('x' * 100)", 'return "done"'), bindings: [] })).toStrictEqual({
      logs: ['committed', '[code-runtime-native] log capture truncated at 64 bytes'],
      value: 'done',
    })
  })

  it('refuses a lossy completion or argument with its reason', async () => {
    for (const [program, reason] of [
      ['return {1: "first", "1": "second"}', 'non-string dict key (int)'],
      ['return {1, 2, 3}', 'unsupported type (set)'],
      ['return -0.0', 'negative zero'],
      ['return float("nan")', 'non-finite float'],
      ['return 2**53 + 1', 'integer not exactly representable as a JavaScript number'],
      [py('class Sneaky(dict):', '    def items(self): return []', 'return Sneaky(secret="kept")'), 'unsupported type (Sneaky)'],
      [py('class F(float):', '    def __repr__(self): return "1.0"', 'return F(2.5)'), 'unsupported type (F)'],
      ['return {"\\ud83d\\ude00": 1, "\\U0001f600": 2}', 'duplicate dict key after surrogate-pair combining'],
    ]) {
      expect(await run(program)).toStrictEqual(lossless(reason))
    }
    const calls = []
    const sink = tools({ sink: async (args) => (calls.push(args), null) })
    for (const [argument, reason] of [['-0.0', 'negative zero'], ['{1: "x"}', 'non-string dict key (int)'], ['{"x": float("nan")}', 'non-finite float']]) {
      const program = py('try:', `    await tools.sink(${argument})`, '    return "accepted"', 'except ToolCallError as e:', '    return str(e)')
      expect(await run(program, sink)).toStrictEqual({ logs: [], value: `binding arguments must be lossless JSON (${reason})` })
    }
    expect(calls).toEqual([])
  })

  it('carries exact values both ways: floats, large integers, lone surrogates, deep nesting, big arguments', async () => {
    const floats = 'return [1.0, 100.0, 1.5, 0.1, 1e-7, 1e-6, 1e-5, 123.456, -2.5e-8, 1e21, float(2**60), 5e-324, 1.7976931348623157e308]'
    expect((await run(floats)).value).toEqual([1, 100, 1.5, 0.1, 1e-7, 1e-6, 1e-5, 123.456, -2.5e-8, 1e21, 2 ** 60, 5e-324, 1.7976931348623157e308])
    expect(await run(py('v = await tools.echo(2**60)', 'return [v == 2**60, 2**53, 2**60]'), echo)).toStrictEqual({ logs: [], value: [true, 2 ** 53, 2 ** 60] })
    expect(await run('return {"lone": "a\\ud800b", "spelled": "\\ud83d\\ude00"}')).toStrictEqual({ logs: [], value: { lone: 'a\ud800b', spelled: '\u{1f600}' } })
    expect(await run('return await tools.echo({"text": "x\\udfff"})', echo)).toStrictEqual({ logs: [], value: { text: 'x\udfff' } })
    const nested = await run(py('v = None', 'for _ in range(10000):', '    v = [v]', 'return v'))
    let depth = 0
    for (let cursor = nested.value; Array.isArray(cursor); cursor = cursor[0]) depth++
    expect(depth).toBe(10000)
    let deep = null
    for (let i = 0; i < 12000; i++) deep = [deep]
    const measured = py('v = await tools.deep({})', 'depth = 0', 'while isinstance(v, list):', '    v = v[0]', '    depth += 1', 'return depth')
    expect(await run(measured, tools({ deep: async () => deep }))).toStrictEqual({ logs: [], value: 12000 })
    let received = 0
    const measure = tools({ measure: async ({ payload }) => (received = payload.length) })
    expect(await run('return await tools.measure({"payload": "B" * 204800})', measure)).toStrictEqual({ logs: [], value: 204800 })
    expect(received).toBe(204800)
  })

  it('meters the completion in UTF-8 JSON bytes against maxValueBytes', async () => {
    const { run: tight } = await mount(PythonPtcRuntime, { maxValueBytes: 4 })
    expect(await tight({ program: 'return "é"', bindings: [] })).toStrictEqual({ logs: [], value: 'é' })
    // Its message is capped at the same budget: too small for more than the marker.
    expect(await tight({ program: 'return "éx"', bindings: [] })).toStrictEqual({ logs: [], error: { kind: 'output-limit', message: '… [truncated]' } })
  })

  it('reports exceptions with <model> frames only, and bounds what it cannot render', async () => {
    expect(await run('$$invalid python$$')).toStrictEqual({
      logs: [],
      error: { kind: 'exception', message: '  File "<model>", line 1\n    $$invalid python$$\n    ^\nSyntaxError: invalid syntax' },
    })
    expect((await run('raise ValueError("intentional")')).error.message).toMatch(/File "<model>", line 1, in __dsh_main__\n.*\nValueError: intentional$/s)
    const rejected = await run('await tools.boom({})', tools({ boom: async () => { throw new Error('exploded') } }))
    expect(rejected.error.message).toMatch(/^Traceback \(most recent call last\):\n {2}File "<model>", line 1, in __dsh_main__\n/)
    expect(rejected.error.message).toMatch(/ToolCallError: exploded$/)
    expect(rejected.error.message).not.toContain('bootstrap.py')
    const unprintable = py('class Unprintable(Exception):', '    def __str__(self):', '        raise RuntimeError("str refused")', 'raise Unprintable()')
    const printed = await run(unprintable)
    expect(printed.error.message).toContain('Unprintable')
    expect(printed.error.message).not.toContain('str refused')
    const hostile = py('class Meta(type):', '    @property', '    def __module__(cls):', '        raise RuntimeError("renderer refused")', 'class Hostile(ValueError, metaclass=Meta):', '    pass', 'raise Hostile("original failure")')
    expect(await run(hostile)).toStrictEqual({ logs: [], error: { kind: 'exception', message: 'Hostile: <diagnostic rendering failed>' } })
    const chain = py('err = None', 'for i in range(3000):', '    try:', '        raise ValueError(i) from err', '    except ValueError as e:', '        err = e', 'raise err')
    expect((await run(chain)).error.message).toContain('[code-runtime-native] exception chain truncated at 100 links')
  })

  it('renders what a host function rejects with: errors, strings, and values with no rendering', async () => {
    const caught = (name) => py('try:', `    await tools.${name}({})`, 'except ToolCallError as e:', '    return "rejected: " + str(e)')
    const failing = tools({
      hostile: async () => { throw { [Symbol.toPrimitive]() { throw new Error('toPrimitive blew up') } } },
      absent: async () => { const error = new Error('placeholder'); error.message = undefined; throw error },
      raw: async () => { throw 'raw-nope' },
      typed: async () => { throw new Error('typed-nope') },
    })
    expect((await run(caught('hostile'), failing)).value).toBe('rejected: <unrenderable rejection value>')
    expect((await run(caught('absent'), failing)).value).toBe('rejected: undefined')
    expect((await run(caught('raw'), failing)).value).toBe('rejected: raw-nope')
    const typed = py('try:', '    await tools.typed({})', 'except ToolCallError as e:', '    return f"{type(e).__name__}:{e.toolName}:{e}"')
    expect((await run(typed, failing)).value).toBe('ToolCallError:typed:typed-nope')
  })

  it('answers undeclared names and exotic names through the namespace proxy', async () => {
    const known = tools({ known: async () => 'ok', 'my-tool': async (args) => ({ got: args }) })
    const attribute = py('try:', '    await tools.nope({})', 'except AttributeError as e:', '    return str(e)')
    expect((await run(attribute, known)).value).toBe("tool 'nope' is not declared in namespace 'tools'")
    const subscript = py('try:', '    await tools["absent"]({})', 'except KeyError as e:', '    return e.args[0]')
    expect((await run(subscript, known)).value).toBe("tool 'absent' is not declared in namespace 'tools'")
    expect((await run('return await tools["my-tool"]({"n": 7})', known)).value).toEqual({ got: { n: 7 } })
  })

  it('names how the child ended when it exits or is killed before completing', async () => {
    expect(await run(py('import os', 'os._exit(7)'))).toStrictEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'python exited (code=7, signal=null) before completing' },
    })
    expect(await run(py('import os, signal', 'os.kill(os.getpid(), signal.SIGKILL)'))).toStrictEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'python exited (code=null, signal=SIGKILL) before completing' },
    })
  })

  it('ends a program that traps SIGTERM at its deadline', async () => {
    const program = py('import signal, time', 'signal.signal(signal.SIGTERM, lambda *a: None)', 'while True: time.sleep(1)')
    const started = Date.now()
    expect(await run(program, [], { timeoutMs: 300 })).toStrictEqual({ logs: [], error: { kind: 'timeout', message: 'execution deadline reached (300ms)' } })
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('classifies an exhausted CPU budget as timeout', async () => {
    const { run: limited } = await mount(PythonPtcRuntime, { cpuSeconds: 1 })
    const result = await limited({ program: 'while True: pass', bindings: [] })
    expect(result.error.kind).toBe('timeout')
    expect(result.error.message).toMatch(/^CPU time exhausted/)
  })

  it('drops what a program forges on fd 3: garbage, unknown frames, unsafe integers', async () => {
    const forged = py(
      'import os',
      'os.write(3, b"not-json\\n")',
      'os.write(3, b\'{"type":"unknown"}\\n\')',
      'os.write(3, b\'{"type":"done","error":{"message":42}}\\n\')',
      'os.write(3, b\'{"type":"call","id":7,"global":"tools","name":"echo","args":9007199254740993}\\n\')',
      'os.write(3, b\'{"type":"done","value":9007199254740993}\\n\')',
      'return await tools.echo({"ok": True})',
    )
    const calls = []
    expect(await run(forged, tools({ echo: async (args) => (calls.push(args), args) }))).toStrictEqual({ logs: [], value: { ok: true } })
    expect(calls).toEqual([{ ok: true }])
  })
})
