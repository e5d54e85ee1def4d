// The current seam as the agent host (0.1.6+) drives it, with the host's own published packages
// from npm: `PtcRuntime` of `@deepseek-ai/dsh-ptc-runtime` as the base of `definePtcRuntimes`, in
// the host's `@deepseek-ai/cordis` context, called the way its tool registry calls it
// (`runtime.run(runtime.resolve({ program, bindings: [tools], signal, cwd, sandboxPolicy,
// timeoutMs }))`), with `executionInstructions` appended to the `run_code` description and
// `timeout` shown as "default X, capped at Y", and the workflow engine's `timeoutMs: null`.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import * as HostSeam from '@deepseek-ai/dsh-ptc-runtime'
import { PtcRuntime } from '@deepseek-ai/dsh-ptc-runtime'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  DUNDER_MEMBER,
  PORTABLE_RESERVED_WORDS,
  RESERVED_BINDING_GLOBALS,
  RESERVED_ERROR_MEMBERS,
  definePtcRuntimes,
} from 'code-runtime-native'
import { PYTHON } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 })
const { IsolatePtcRuntime, PythonPtcRuntime } = definePtcRuntimes(PtcRuntime)
const WORKSPACE = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'crn-host-ptc-')))
afterAll(() => fs.rmSync(WORKSPACE, { recursive: true, force: true }))

/** The host's tool registry: the `tools` namespace of one `run_code` call, each tool counted. */
function toolsNamespace(tools) {
  const calls = []
  const functions = Object.create(null)
  for (const [name, fn] of Object.entries(tools)) {
    Object.defineProperty(functions, name, {
      enumerable: true,
      value: async (args) => {
        calls.push(name)
        return fn(args)
      },
    })
  }
  return { calls, bindings: [{ global: 'tools', functions, errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' } }] }
}

/** What the host's registry shows the model: the description, the runtime's instructions, the timeout. */
function runCodeDescription(runtime) {
  const { defaultMs, maxMs } = runtime.timeout
  return [
    'Run a program that calls the tools below.',
    runtime.executionInstructions,
    `timeoutMs: optional, default ${defaultMs}, capped at ${maxMs}.`,
  ].filter((part) => part !== '').join('\n\n')
}

describe('on the host seam', () => {
  it("the backends' reserved sets are the host's own", () => {
    expect([...PORTABLE_RESERVED_WORDS]).toEqual([...HostSeam.PORTABLE_RESERVED_WORDS])
    expect([...RESERVED_BINDING_GLOBALS]).toEqual([...HostSeam.RESERVED_BINDING_GLOBALS])
    expect([...RESERVED_ERROR_MEMBERS]).toEqual([...HostSeam.RESERVED_ERROR_MEMBERS])
    expect(String(DUNDER_MEMBER)).toBe(String(HostSeam.DUNDER_MEMBER))
  })
})

describe.each([
  ['IsolatePtcRuntime', 'typescript', 'v8-isolate'],
  ['PythonPtcRuntime', 'python', 'process'],
])("%s on the host's PtcRuntime", (name, language, isolation) => {
  const Class = name === 'IsolatePtcRuntime' ? IsolatePtcRuntime : PythonPtcRuntime
  const program = language === 'typescript'
    ? `const r = await tools.double({ n: 21 })
try { await tools.fail({}) } catch (e) { console.log(e instanceof ToolCallError, e.toolName, e.message) }
console.log('got', r)
return { doubled: r }`
    : `r = await tools.double({"n": 21})
try:
    await tools.fail({})
except ToolCallError as e:
    print(isinstance(e, ToolCallError), e.toolName, str(e))
print("got", r)
return {"doubled": r}`
  const failed = language === 'typescript' ? 'true fail tool failed' : 'True fail tool failed'
  let ctx
  let fiber
  let runtime
  beforeAll(async () => {
    ctx = new Context()
    const config = { timeoutMs: 1500, maxTimeoutMs: 8000, cwd: WORKSPACE }
    fiber = await ctx.plugin(Class, language === 'python' ? { ...config, pythonBin: PYTHON, graceMs: 300 } : config)
    runtime = ctx.ptcRuntime
  })
  afterAll(async () => {
    await fiber.dispose()
    expect(ctx.get('ptcRuntime')).toBeUndefined()
  })

  it("registers as the host's ctx.ptcRuntime, a PtcRuntime with the host's descriptors filled", () => {
    expect(runtime).toBeInstanceOf(PtcRuntime)
    expect([runtime.language, runtime.isolation]).toEqual([language, isolation])
    expect(runtime.timeout).toEqual({ defaultMs: 1500, maxMs: 8000 })
    expect(runtime.executionInstructions).not.toBe('')
    // The base's defaults (empty instructions, no timeout, no sandbox mode) are overridden.
    expect(Object.getOwnPropertyDescriptor(PtcRuntime.prototype, 'timeout').get.call(runtime)).toBeUndefined()
  })

  it('the run_code description shows the instructions and "default X, capped at Y"', () => {
    const description = runCodeDescription(runtime)
    expect(description).toContain(runtime.executionInstructions)
    expect(description).toContain('default 1500, capped at 8000')
    expect(description.split('\n\n')).toHaveLength(3)
  })

  it("the registry's call pattern: tools, signal, cwd, policy, timeoutMs", async () => {
    const { calls, bindings } = toolsNamespace({
      double: async ({ n }) => n * 2,
      fail: async () => { throw new Error('tool failed') },
    })
    const signal = new AbortController().signal
    const mode = language === 'typescript' ? 'workspace-write' : 'danger-full-access'
    const sandboxPolicy = { mode, workspaceRoot: WORKSPACE, sessionId: 'session-1' }
    const result = await runtime.run(runtime.resolve({ program, bindings, signal, cwd: WORKSPACE, sandboxPolicy, timeoutMs: 5000 }))
    const enforcement = mode === 'danger-full-access' ? {} : { enforcement: expect.stringMatching(/^(full|partial)$/) }
    expect(result).toStrictEqual({
      logs: [failed, 'got 42'],
      value: { doubled: 42 },
      sandbox: { mode, denied: false, ...enforcement },
    })
    expect(calls).toEqual(['double', 'fail'])
  })

  it("the model's timeoutMs is capped; an abort from the host's signal ends the run", async () => {
    const { bindings } = toolsNamespace({})
    const spec = runtime.resolve({ program: 'return 1', bindings, timeoutMs: 60_000 })
    expect(spec.timeoutMs).toBe(8000)
    const controller = new AbortController()
    const spin = language === 'typescript' ? 'for (;;) {}' : 'while True:\n    pass'
    const pending = runtime.run(runtime.resolve({ program: spin, bindings, signal: controller.signal }))
    setTimeout(() => controller.abort('turn cancelled'), 300)
    expect(await pending).toStrictEqual({ logs: [], error: { kind: 'abort', message: 'turn cancelled' } })
  })

  it("the workflow engine's timeoutMs: null runs past the default deadline", async () => {
    const { bindings } = toolsNamespace({ wait: async ({ ms }) => new Promise((r) => setTimeout(() => r(ms), ms)) })
    const waited = language === 'typescript' ? 'return await tools.wait({ ms: 1800 })' : 'return await tools.wait({"ms": 1800})'
    const result = await runtime.run(runtime.resolve({ program: waited, bindings, timeoutMs: null }))
    expect(result).toStrictEqual({ logs: [], value: 1800 })
    const capped = await runtime.run(runtime.resolve({ program: waited, bindings }))
    expect(capped).toStrictEqual({ logs: [], error: { kind: 'timeout', message: 'execution deadline reached (1500ms); 1 tool call pending: tools.wait' } })
  })

  it('misuse rejects as the host expects: an unresolved request, a non-portable binding name', async () => {
    await expect(runtime.run({ program: 'return 1', bindings: [] })).rejects.toThrow(/needs a resolved spec: .*spec\.cwd is missing/)
    const spec = runtime.resolve({ program: 'return 1', bindings: [{ global: '$tools', functions: {} }] })
    await expect(runtime.run(spec)).rejects.toThrow(/\$tools/)
    expect(() => runtime.resolve({ program: 'return 1', bindings: [], cwd: 'relative' })).toThrow(/request\.cwd/)
  })
})

// The host's policy service (`ctx.sandboxPolicy`, `@deepseek-ai/dsh-sandbox-policy`): its default
// mode is what the Python runtime advertises, its `resolve()` fills a request without a policy,
// and a session's override (the host resolves it and passes the policy) is what the run gets. The
// TypeScript runtime advertises nothing and is filled with nothing (a program has no files).
describe("the host's ctx.sandboxPolicy", () => {
  const SESSION_ROOT = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'crn-host-policy-')))
  afterAll(() => fs.rmSync(SESSION_ROOT, { recursive: true, force: true }))

  async function compose(Class, mode) {
    const { SandboxPolicyService } = await import('@deepseek-ai/dsh-sandbox-policy')
    const ctx = new Context()
    await ctx.plugin(SandboxPolicyService, { mode, workspaceRoot: SESSION_ROOT })
    const config = { timeoutMs: 5000 }
    const fiber = await ctx.plugin(Class, Class === PythonPtcRuntime ? { ...config, pythonBin: PYTHON } : config)
    return { ctx, fiber, runtime: ctx.ptcRuntime }
  }

  it('Python advertises the service\'s defaultMode, and resolve() fills its policy and workspace', async () => {
    const { ctx, fiber, runtime } = await compose(PythonPtcRuntime, 'workspace-write')
    expect(runtime.sandboxMode).toBe('workspace-write')
    expect(runtime.sandboxMode).toBe(ctx.sandboxPolicy.defaultMode)
    const spec = runtime.resolve({ program: 'open("made.txt", "w").write("x")\nimport os\nreturn os.getcwd()', bindings: [] })
    expect(spec.sandboxPolicy).toEqual({ mode: 'workspace-write', workspaceRoot: SESSION_ROOT })
    expect(spec.cwd).toBe(SESSION_ROOT)
    expect(await runtime.run(spec)).toStrictEqual({
      logs: [],
      value: SESSION_ROOT,
      sandbox: { mode: 'workspace-write', denied: false, enforcement: 'full' },
    })
    expect(fs.readFileSync(path.join(SESSION_ROOT, 'made.txt'), 'utf8')).toBe('x')
    // What the request names wins over the standing policy.
    const named = runtime.resolve({ program: 'return 1', bindings: [], sandboxPolicy: { mode: 'read-only', workspaceRoot: WORKSPACE } })
    expect(named.sandboxPolicy).toEqual({ mode: 'read-only', workspaceRoot: WORKSPACE })
    await fiber.dispose()
  })

  it("a session's override is the run's: the host resolves it, and a write under read-only is refused", async () => {
    const { ctx, fiber, runtime } = await compose(PythonPtcRuntime, 'workspace-write')
    const { setSandboxMode } = await import('@deepseek-ai/dsh-sandbox-policy')
    // A session as the policy service reads one: its header's cwd and its event log.
    const events = []
    const session = { id: 'session-ro', header: { cwd: SESSION_ROOT }, events, append: (type, data) => events.push({ type, data }) }
    setSandboxMode(session, 'read-only')
    const sandboxPolicy = ctx.sandboxPolicy.resolve({ session })
    expect(sandboxPolicy).toEqual({ mode: 'read-only', workspaceRoot: SESSION_ROOT, sessionId: 'session-ro' })
    const program = 'import errno\ntry:\n    open("blocked.txt", "w")\nexcept OSError as e:\n    return errno.errorcode[e.errno]\nreturn "wrote"'
    const result = await runtime.run(runtime.resolve({ program, bindings: [], sandboxPolicy }))
    // The workspace is mounted read-only (EROFS) and Landlock refuses the write (EACCES) besides.
    expect(result).toStrictEqual({
      logs: [],
      value: expect.stringMatching(/^(EROFS|EACCES)$/),
      sandbox: { mode: 'read-only', denied: false, enforcement: 'full' },
    })
    expect(fs.existsSync(path.join(SESSION_ROOT, 'blocked.txt'))).toBe(false)
    await fiber.dispose()
  })

  it('TypeScript advertises no mode beside the service, and resolve() fills no policy', async () => {
    const { fiber, runtime } = await compose(IsolatePtcRuntime, 'workspace-write')
    expect(runtime.sandboxMode).toBeUndefined()
    const spec = runtime.resolve({ program: 'return 1', bindings: [] })
    expect(spec.sandboxPolicy).toBeUndefined()
    expect(await runtime.run(spec)).toStrictEqual({ logs: [], value: 1 })
    // The instructions say the working directory reaches no program, so the host's sentence
    // after them ("the working directory is the session's") stays true.
    expect(runtime.executionInstructions).toContain('The working directory a call names matters only to the host functions the program calls')
    expect(runtime.executionInstructions).not.toMatch(/sandbox_permissions|escalat/)
    await fiber.dispose()
  })

  it('a standing policy the service hands back is checked like a request\'s', async () => {
    const { ctx, fiber, runtime } = await compose(PythonPtcRuntime, 'read-only')
    const link = path.join(os.tmpdir(), `crn-host-policy-link-${process.pid}`)
    fs.symlinkSync(SESSION_ROOT, link)
    try {
      // The service resolves a session's cwd through its links; a root given with one is refused.
      const original = ctx.sandboxPolicy.resolve
      ctx.sandboxPolicy.resolve = () => ({ mode: 'read-only', workspaceRoot: `${link}/` })
      expect(() => runtime.resolve({ program: 'return 1', bindings: [] })).toThrow(
        /the host's standing policy \(ctx\.sandboxPolicy\.resolve\(\)\)\.workspaceRoot/,
      )
      ctx.sandboxPolicy.resolve = original
    } finally {
      fs.rmSync(link)
    }
    await fiber.dispose()
  })
})
