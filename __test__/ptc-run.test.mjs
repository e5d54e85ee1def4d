// run(spec) of the `ctx.ptcRuntime` seam in real isolates, sandbox processes and Python children:
// the result's exact shape, the sandbox facts per mode, the spec's deadline as the wall ceiling
// (a number capped, `null` none), and a null-deadline run that ends by its compute budget, by
// abort and by dispose with nothing left (no process, nothing holding Node open).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { IsolatePtcRuntime, PythonPtcRuntime } from 'code-runtime-native'
import native from '../lib/native.mjs'
import { runAs, sandboxProcesses, unprivilegedPackage } from './process-helpers.mjs'
import { PYTHON, REPO, URLS, privateTmpdir, unreapedChildren } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 })
// The system's temporary directory, before this file takes a private one (another user reaches it).
const SYSTEM_TMP = os.tmpdir()
const TMP = privateTmpdir('ptc-run')
const WORKSPACE = fs.mkdtempSync(path.join(TMP, 'workspace-'))
const CONTAINED = native.containedIsolatesAvailable()
const MODES = ['read-only', 'workspace-write', 'danger-full-access']
const policy = (mode) => ({ mode, workspaceRoot: WORKSPACE })

afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }))

async function load(Class, config) {
  const ctx = new Context()
  const fiber = await ctx.plugin(Class, Class === PythonPtcRuntime ? { pythonBin: PYTHON, ...config } : config)
  const runtime = ctx.ptcRuntime
  return { fiber, runtime, run: (request) => runtime.run(runtime.resolve({ bindings: [], ...request })) }
}

describe.each([
  ['process', CONTAINED ? 'full' : 'partial'],
  ['thread', 'partial'],
])('TypeScript, containment %s', (containment, confinedEnforcement) => {
  let R
  beforeAll(async () => {
    R = await load(IsolatePtcRuntime, { containment, timeoutMs: 400, maxTimeoutMs: 800, computeMs: 300 })
  })
  afterAll(() => R.fiber.dispose())

  it('a result has exactly the seam shape, and sandbox only when a policy was given', async () => {
    expect(await R.run({ program: 'console.log("hi"); return 42' })).toStrictEqual({ logs: ['hi'], value: 42 })
    expect(await R.run({ program: 'console.log("x")' })).toStrictEqual({ logs: ['x'] })
    expect(await R.run({ program: 'throw new Error("bad")' })).toStrictEqual({
      logs: [],
      error: { kind: 'exception', message: 'Error: bad\n    at program.ts:1:7' },
    })
  })

  it.each(MODES)('under %s: the facts, and no file system to reach', async (mode) => {
    const program = 'return [typeof require, typeof fetch, typeof Deno, Object.keys(process.env).length]'
    const expected = { logs: [], value: ['undefined', 'undefined', 'undefined', 0] }
    const enforcement = mode === 'danger-full-access' ? {} : { enforcement: confinedEnforcement }
    expect(await R.run({ program, sandboxPolicy: policy(mode) })).toStrictEqual({
      ...expected,
      sandbox: { mode, denied: false, ...enforcement },
    })
    expect(await R.run({ program: 'throw 1', sandboxPolicy: policy(mode) })).toStrictEqual({
      logs: [],
      error: { kind: 'exception', message: '1' },
      sandbox: { mode, denied: false, ...enforcement },
    })
  })

  it("the spec's deadline ends a run in the host's words: the default, a number, a number past the cap", async () => {
    const wait = (ms) => `await new Promise((r) => setTimeout(r, ${ms})); return 'late'`
    const ceiling = (ms) => ({ logs: [], error: { kind: 'timeout', message: `execution deadline reached (${ms}ms)` } })
    expect(await R.run({ program: wait(2000) })).toStrictEqual(ceiling(400))
    expect(await R.run({ program: wait(2000), timeoutMs: 150 })).toStrictEqual(ceiling(150))
    expect(await R.run({ program: wait(2000), timeoutMs: 10_000 })).toStrictEqual(ceiling(800))
    expect(await R.run({ program: wait(100), timeoutMs: 600 })).toStrictEqual({ logs: [], value: 'late' })
  })

  it('a null deadline has no wall ceiling: a run outlives the maximum; the compute budget still ends it', async () => {
    const started = Date.now()
    expect(await R.run({ program: "await new Promise((r) => setTimeout(r, 1200)); return 'late'", timeoutMs: null })).toStrictEqual({
      logs: [],
      value: 'late',
    })
    expect(Date.now() - started).toBeGreaterThanOrEqual(1200)
    expect(await R.run({ program: 'for (;;) {}', timeoutMs: null })).toStrictEqual({
      logs: [],
      error: { kind: 'timeout', message: 'compute budget exhausted (300ms busy) at program.ts:1:1' },
    })
  })
})

describe('Python', () => {
  let R
  beforeAll(async () => {
    R = await load(PythonPtcRuntime, { timeoutMs: 1500, maxTimeoutMs: 3000, cpuSeconds: 1, graceMs: 300 })
  })
  afterAll(async () => {
    await R.fiber.dispose()
    expect(unreapedChildren()).toEqual([])
  })

  it('a result has exactly the seam shape', async () => {
    expect(await R.run({ program: 'print("hi")\nreturn 42' })).toStrictEqual({ logs: ['hi'], value: 42 })
    // A Python body that returns nothing returns None: JSON null.
    expect(await R.run({ program: 'print("x")' })).toStrictEqual({ logs: ['x'], value: null })
  })

  it.each(['read-only', 'workspace-write'])('under %s the run is confined and says so', async (mode) => {
    const marker = path.join(WORKSPACE, `ran-${mode}`)
    const program = `open(${JSON.stringify(marker)}, "w").write("x")\nreturn 1`
    const result = await R.run({ program, sandboxPolicy: policy(mode) })
    expect(result.sandbox).toStrictEqual({ mode, denied: mode === 'read-only', enforcement: 'full' })
    expect(fs.existsSync(marker)).toBe(mode === 'workspace-write')
  })

  // Issue 28: without request.cwd a policy's run starts in its workspace, as the host's backend's
  // does; before, it started in the host process's cwd, which read-only then made readable.
  it.each(MODES)('under %s without a cwd the run starts in the workspace and is granted nothing else', async (mode) => {
    fs.writeFileSync(path.join(WORKSPACE, 'here'), 'x')
    const program = [
      'import os',
      'names = sorted(os.listdir("."))',
      'try:',
      `    os.listdir(${JSON.stringify(REPO)})`,
      '    repo = "listed"',
      'except OSError:',
      '    repo = "refused"',
      'return [os.getcwd(), "here" in names, repo]',
    ].join('\n')
    const result = await R.run({ program, sandboxPolicy: policy(mode) })
    // Even danger-full-access runs in a root of its own, which holds the workspace, not the host's
    // checkout this suite runs from.
    expect(result.value).toStrictEqual([WORKSPACE, true, 'refused'])
  })

  // docs/seam.md#denied-the-programs-claim: text the program made is no refusal.
  it('denied: a PermissionError the program raised itself, or refusal text it wrote, is not a denial', async () => {
    const file = JSON.stringify(path.join(WORKSPACE, 'claimed'))
    const forged = {
      'a PermissionError without a file': "raise PermissionError(13, 'Permission denied')",
      'an OSError without a file': "raise OSError(30, 'Read-only file system')",
      "another exception with the refusal's text": `raise RuntimeError("PermissionError: [Errno 13] Permission denied: " + repr(${file}))`,
      "a refusal's line after the first line of a message": `raise ValueError("no\\nPermissionError: [Errno 13] Permission denied: " + repr(${file}))`,
      'printed refusal text, then a failure': `print("PermissionError: [Errno 13] Permission denied: " + repr(${file}))\nraise KeyError("x")`,
      'a lock refused (no file named)': 'import fcntl\nfcntl.flock(open("/dev/null"), fcntl.LOCK_EX)',
    }
    for (const [what, program] of Object.entries(forged)) {
      const result = await R.run({ program, sandboxPolicy: policy('read-only') })
      expect([what, result.error?.kind, result.sandbox]).toStrictEqual([what, 'exception', { mode: 'read-only', denied: false, enforcement: 'full' }])
    }
    // A real refusal counts, under the mode that forbids it and not under one that allows it.
    const outside = `open("/usr/crn-denied", "w")`
    expect((await R.run({ program: outside, sandboxPolicy: policy('workspace-write') })).sandbox.denied).toBe(true)
    const dangerous = await R.run({ program: outside, sandboxPolicy: policy('danger-full-access') })
    expect([dangerous.error?.kind, dangerous.sandbox]).toStrictEqual(['exception', { mode: 'danger-full-access', denied: false }])
    // What the runner, in the program's own process, cannot tell: a PermissionError the program
    // raised for a file the mode forbids it to write. The host must not act on denied alone.
    const claimed = await R.run({ program: `raise PermissionError(13, "Permission denied", ${file})`, sandboxPolicy: policy('read-only') })
    expect(claimed.sandbox.denied).toBe(true)
    expect(fs.existsSync(path.join(WORKSPACE, 'claimed'))).toBe(false)
  })

  // Issue 28: the run's own root holds none of the host's other files, so a write beside the
  // workspace failed ENOENT, and the host never offered a wider mode.
  it('denied: a file the run\'s own root hides (ENOENT beneath nothing it holds) is a denial; a file missing where it looks is not', async () => {
    const elsewhere = fs.mkdtempSync(path.join(TMP, 'elsewhere-'))
    const hidden = JSON.stringify(path.join(elsewhere, 'out.txt'))
    for (const mode of ['read-only', 'workspace-write']) {
      const write = await R.run({ program: `open(${hidden}, "w").write("x")`, sandboxPolicy: policy(mode) })
      expect([mode, write.error.message.split('\n').at(-1), write.sandbox.denied]).toStrictEqual([
        mode,
        `FileNotFoundError: [Errno 2] No such file or directory: ${hidden.replaceAll('"', "'")}`,
        true,
      ])
      const read = await R.run({ program: `open(${hidden}).read()`, sandboxPolicy: policy(mode) })
      expect([mode, read.sandbox.denied]).toStrictEqual([mode, true])
    }
    expect(fs.readdirSync(elsewhere)).toEqual([])
    const absent = {
      'in the workspace': `open(${JSON.stringify(path.join(WORKSPACE, 'missing', 'f'))}, "w")`,
      'relative to the working directory': 'open("missing/f", "w")',
      "in the system's trees": 'open("/usr/crn-missing/f")',
      "in the run's scratch": 'import os\nopen(os.environ["TMPDIR"] + "/missing/f", "w")',
    }
    for (const [where, program] of Object.entries(absent)) {
      const result = await R.run({ program, sandboxPolicy: policy('workspace-write') })
      expect([where, result.error.message.split('\n').at(-1).split(':')[0], result.sandbox.denied]).toStrictEqual([where, 'FileNotFoundError', false])
    }
    // danger-full-access is the widest mode (its root still holds the workspace alone, seam.md
    // "danger-full-access"): no wider mode to offer, so never a denial.
    const open = await R.run({ program: `open(${hidden}, "w")`, sandboxPolicy: policy('danger-full-access') })
    expect([open.error.message.split('\n').at(-1).split(':')[0], open.sandbox.denied]).toStrictEqual(['FileNotFoundError', false])
    // A FileNotFoundError the program raised itself for a hidden file is its claim, as above.
    const claimed = await R.run({ program: `raise FileNotFoundError(2, "No such file or directory", ${hidden})`, sandboxPolicy: policy('read-only') })
    expect(claimed.sandbox.denied).toBe(true)
  })

  it('where the helper is unusable (allowUnsandboxed), a confined mode is refused as sandbox-unavailable: nothing runs', async () => {
    // A source checkout whose helper is not executable: the runtime loads (allowUnsandboxed) with
    // none of the helper's layers, so no file policy can be enforced.
    const dir = fs.mkdtempSync(path.join(TMP, 'unusable-'))
    for (const entry of ['package.json', 'index.js', 'lib', 'py', 'Cargo.toml']) {
      fs.cpSync(path.join(REPO, entry), path.join(dir, entry), { recursive: true })
    }
    for (const file of fs.readdirSync(REPO).filter((f) => f.endsWith('.node'))) fs.linkSync(path.join(REPO, file), path.join(dir, file))
    fs.copyFileSync(path.join(REPO, 'code-runtime-native-sandbox'), path.join(dir, 'code-runtime-native-sandbox'))
    fs.chmodSync(path.join(dir, 'code-runtime-native-sandbox'), 0o644)
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'))
    const marker = path.join(WORKSPACE, 'ran-unusable')
    const source = `
      import { Context } from 'cordis'
      import { PythonPtcRuntime } from './lib/index.mjs'
      const ctx = new Context()
      await ctx.plugin(PythonPtcRuntime, { pythonBin: ${JSON.stringify(PYTHON)}, allowUnsandboxed: true })
      const runtime = ctx.ptcRuntime
      let calls = 0
      const bindings = [{ global: 'tools', functions: { touch: async () => ++calls } }]
      const program = ${JSON.stringify(`await tools.touch({})\nopen(${JSON.stringify(marker)}, "w").write("x")\nreturn 1`)}
      const out = { sandboxMode: runtime.sandboxMode ?? null, helper: runtime.sandbox.helper }
      out.result = await runtime.run(runtime.resolve({ program, bindings, sandboxPolicy: { mode: 'read-only', workspaceRoot: ${JSON.stringify(WORKSPACE)} } }))
      out.calls = calls
      process.stdout.write(JSON.stringify(out))
      process.exit(0)
    `
    fs.writeFileSync(path.join(dir, 'host.mjs'), source)
    const { code, stdout, stderr } = await runAs(process.execPath, path.join(dir, 'host.mjs'), {
      uid: process.getuid(),
      gid: process.getgid(),
      cwd: dir,
      env: { ...process.env, TMPDIR: TMP },
    })
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(JSON.parse(stdout)).toStrictEqual({
      sandboxMode: null,
      helper: false,
      result: {
        logs: [],
        error: {
          kind: 'sandbox-unavailable',
          message:
            'code-runtime-native: the "read-only" file policy cannot be enforced on this machine\'s Python runs: it needs the ' +
            'sandbox helper with Landlock at least (runtime.sandbox has helper: false, landlock: 0), so the program did not run. ' +
            'Repair the helper (docs/sandbox.md#the-sandbox-helper), run it without a sandboxPolicy (its child then reaches no workspace ' +
            'file at all), or on the TypeScript runtime, which has no file system under any policy.',
        },
        sandbox: { mode: 'read-only', denied: false },
      },
      calls: 0,
    })
    expect(fs.existsSync(marker)).toBe(false)
  })

  it('a confined run still rejects misuse first (invalid bindings)', async () => {
    const spec = R.runtime.resolve({ program: 'return 1', bindings: [{ global: 'lambda', functions: {} }], sandboxPolicy: policy('read-only') })
    await expect(R.runtime.run(spec)).rejects.toThrow(/lambda/)
  })

  it('under danger-full-access it runs, with the facts and no enforcement', async () => {
    expect(await R.run({ program: 'return 7', sandboxPolicy: policy('danger-full-access') })).toStrictEqual({
      logs: [],
      value: 7,
      sandbox: { mode: 'danger-full-access', denied: false },
    })
  })

  it("the spec's deadline ends a run in the host's words; a null deadline has none; the CPU budget still ends it", async () => {
    const sleep = (s) => `import time\ntime.sleep(${s})\nreturn "late"`
    // Stopped in time.sleep (docs/tracing.md#the-timeouts-clause).
    const ceiling = (ms) => ({ logs: [], error: { kind: 'timeout', message: `execution deadline reached (${ms}ms) at <model>:2:1` } })
    expect(await R.run({ program: sleep(10) })).toStrictEqual(ceiling(1500))
    expect(await R.run({ program: sleep(10), timeoutMs: 400 })).toStrictEqual(ceiling(400))
    expect(await R.run({ program: sleep(10), timeoutMs: 60_000 })).toStrictEqual(ceiling(3000))
    expect(await R.run({ program: sleep(3.5), timeoutMs: null })).toStrictEqual({ logs: [], value: 'late' })
    const spun = await R.run({ program: 'while True:\n    pass', timeoutMs: null })
    expect(spun.error).toEqual({ kind: 'timeout', message: expect.stringMatching(/CPU/) })
    expect(spun.error.kind).toBe('timeout')
    expect(spun.error.message).toMatch(/CPU/)
  })
})

/** Runs a Node ESM script in a child process, SIGKILLed after `ms`; resolves `{ code, signal, stdout, stderr }`. */
function hostProcess(source, ms) {
  const file = path.join(TMP, `host-${Date.now()}-${Math.random().toString(36).slice(2)}.mjs`)
  fs.writeFileSync(file, source)
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], timeout: ms, killSignal: 'SIGKILL' })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

/** A host process that runs a null-deadline busy loop, ends it by `how`, then disposes; it never calls exit. */
const lifetimeScript = (Class, config, program, how) => `
import { Context } from ${JSON.stringify(URLS.cordis)}
import { ${Class} } from ${JSON.stringify(URLS.index)}
import { descendants } from ${JSON.stringify(pathToFileURL(path.join(REPO, '__test__/process-helpers.mjs')).href)}
const ctx = new Context()
const fiber = await ctx.plugin(${Class}, ${JSON.stringify(config)})
const runtime = ctx.ptcRuntime
const controller = new AbortController()
const spec = runtime.resolve({ program: ${JSON.stringify(program)}, bindings: [], timeoutMs: null, signal: controller.signal })
const pending = runtime.run(spec)
await new Promise((r) => setTimeout(r, 700))
const during = descendants().length
const startedEnd = Date.now()
${how === 'abort' ? "controller.abort('stopped by the host')" : 'const disposing = fiber.dispose()'}
const result = await pending
const endMs = Date.now() - startedEnd
${how === 'abort' ? "const after = await runtime.run(runtime.resolve({ program: 'return 1', bindings: [], timeoutMs: null }))\nawait fiber.dispose()" : 'await disposing\nconst after = null'}
process.stdout.write(JSON.stringify({ result, after, during, endMs, left: descendants(), exitAt: Date.now() }))
`

describe.each([
  ['IsolatePtcRuntime', { computeMs: 600000 }, 'for (;;) {}'],
  ['IsolatePtcRuntime', { computeMs: 600000, containment: 'thread' }, 'for (;;) {}'],
  ['PythonPtcRuntime', { pythonBin: PYTHON, cpuSeconds: 600, graceMs: 300 }, 'while True:\n    pass'],
])('a null-deadline run of %s %j', (Class, config, program) => {
  it.each(['abort', 'dispose'])('ends by %s with nothing left, and the host exits by itself', async (how) => {
    const started = Date.now()
    const out = await hostProcess(lifetimeScript(Class, config, program, how), 30_000)
    const exited = Date.now()
    expect({ code: out.code, signal: out.signal, stderr: out.stderr }).toEqual({ code: 0, signal: null, stderr: '' })
    const report = JSON.parse(out.stdout)
    const message = how === 'abort' ? 'stopped by the host' : 'runtime disposed'
    expect(report.result).toStrictEqual({ logs: [], error: { kind: 'abort', message } })
    if (how === 'abort') expect(report.after).toStrictEqual({ logs: [], value: 1 })
    // The run's process existed while it ran (none for the thread tier), and none is left.
    if (Class === 'PythonPtcRuntime' || config.containment !== 'thread') expect(report.during).toBeGreaterThan(0)
    expect(report.left).toEqual([])
    expect(report.endMs).toBeLessThan(5000)
    // Nothing held Node open: it exited right after its last line (a live timer or handle would
    // have kept it until the 30 s kill).
    expect(exited - started).toBeLessThan(25_000)
    expect(exited - report.exitAt).toBeLessThan(3000)
  })
})

describe.runIf(CONTAINED)('as an unprivileged user', () => {
  it('a confined TypeScript run reports the same facts in a host process of another user', async () => {
    const uid = process.getuid() === 0 ? 65534 : process.getuid()
    const gid = process.getuid() === 0 ? 65534 : process.getgid()
    const base = fs.mkdtempSync(path.join(SYSTEM_TMP, 'crn-ptc-unprivileged-'))
    try {
      fs.chmodSync(base, 0o755)
      const { pkg, node } = unprivilegedPackage(REPO, base)
      const script = path.join(pkg, 'host.mjs')
      fs.writeFileSync(
        script,
        `import { Context } from 'cordis'
import { IsolatePtcRuntime } from './lib/index.mjs'
const ctx = new Context()
const fiber = await ctx.plugin(IsolatePtcRuntime, { cwd: '/' })
const rt = ctx.ptcRuntime
const out = []
for (const mode of ['read-only', 'workspace-write', 'danger-full-access']) {
  out.push(await rt.run(rt.resolve({ program: 'return typeof require', bindings: [], sandboxPolicy: { mode, workspaceRoot: '/tmp' } })))
}
await fiber.dispose()
process.stdout.write(JSON.stringify({ uid: process.getuid(), out }))
`,
      )
      fs.chmodSync(script, 0o644)
      const { code, stdout, stderr } = await runAs(node, script, { uid, gid, cwd: '/', env: { PATH: '/usr/bin:/bin' } })
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      const report = JSON.parse(stdout)
      expect(report.uid).toBe(uid)
      expect(report.out).toStrictEqual([
        { logs: [], value: 'undefined', sandbox: { mode: 'read-only', denied: false, enforcement: 'full' } },
        { logs: [], value: 'undefined', sandbox: { mode: 'workspace-write', denied: false, enforcement: 'full' } },
        { logs: [], value: 'undefined', sandbox: { mode: 'danger-full-access', denied: false } },
      ])
    } finally {
      fs.rmSync(base, { recursive: true, force: true })
    }
    expect(sandboxProcesses()).toEqual([])
  })
})
