// resolve() of the `ctx.ptcRuntime` seam against hostile requests, and what run() accepts: every
// rule of docs/seam.md#the-ctxptcruntime-seam (defaults, cwd, timeoutMs, sandboxPolicy, misuse that names
// the field), the seam's config keys, and the descriptors. Real runtimes, both backends.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IsolatePtcRuntime, PythonPtcRuntime } from 'code-runtime-native'
import { PYTHON } from './python-helpers.mjs'

const P = 'code-runtime-native: '
const DIR = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'crn-ptc-resolve-')))
const FILE = path.join(DIR, 'a-file')
fs.writeFileSync(FILE, 'x')

let ctx
let runtime
beforeAll(async () => {
  ctx = new Context()
  await ctx.plugin(IsolatePtcRuntime, { containment: 'thread', timeoutMs: 5000, maxTimeoutMs: 20000, cwd: DIR })
  runtime = ctx.ptcRuntime
})
afterAll(() => fs.rmSync(DIR, { recursive: true, force: true }))

const base = { program: 'return 1', bindings: [] }
const resolve = (fields) => runtime.resolve({ ...base, ...fields })

describe('defaults', () => {
  it('fills cwd and the default deadline; carries program, bindings and signal as given; frozen', () => {
    const bindings = []
    const signal = new AbortController().signal
    const spec = runtime.resolve({ program: 'return 2', bindings, signal })
    expect(spec).toEqual({ program: 'return 2', bindings, signal, cwd: DIR, timeoutMs: 5000 })
    expect(spec.bindings).toBe(bindings)
    expect(spec.signal).toBe(signal)
    expect(Object.isFrozen(spec)).toBe(true)
    expect(Object.keys(runtime.resolve(base))).toEqual(['program', 'bindings', 'cwd', 'timeoutMs'])
  })

  it('timeoutMs written as undefined is the default; a policy written as undefined is none', () => {
    expect(resolve({ timeoutMs: undefined, sandboxPolicy: undefined })).toEqual({ ...base, cwd: DIR, timeoutMs: 5000 })
  })

  it('the config default cwd is the process cwd at load', async () => {
    const other = new Context()
    const fiber = await other.plugin(IsolatePtcRuntime, { containment: 'thread' })
    expect(other.ptcRuntime.resolve(base).cwd).toBe(process.cwd())
    expect(other.ptcRuntime.timeout).toEqual({ defaultMs: 120000, maxMs: 600000 })
    // A program has no file system: nothing to advertise, nothing to escalate.
    expect(other.ptcRuntime.sandboxMode).toBeUndefined()
    await fiber.dispose()
  })

  it('a default deadline above the cap is capped, as the host\'s backends do', async () => {
    const other = new Context()
    const fiber = await other.plugin(IsolatePtcRuntime, { containment: 'thread', timeoutMs: 700000 })
    expect(other.ptcRuntime.timeout).toEqual({ defaultMs: 600000, maxMs: 600000 })
    expect(other.ptcRuntime.resolve(base).timeoutMs).toBe(600000)
    await fiber.dispose()
  })
})

describe('cwd', () => {
  it('accepts an absolute existing directory, normalised', () => {
    expect(resolve({ cwd: `${DIR}/./sub/../` }).cwd).toBe(DIR)
    expect(resolve({ cwd: '/' }).cwd).toBe('/')
  })

  it.each([
    ['a relative path', 'work/dir', '"work/dir"'],
    ['an empty string', '', '""'],
    ['a number', 7, '7'],
    ['null', null, 'null'],
    ['an object', { toString: () => DIR }, 'an object'],
    ['a path with a NUL byte', `${DIR}\0x`, JSON.stringify(`${DIR}\0x`)],
  ])('refuses %s, naming the field', (_, cwd, shown) => {
    expect(() => resolve({ cwd })).toThrow(
      new TypeError(`${P}request.cwd must be the absolute path of an existing directory, got ${shown}`),
    )
  })

  it('refuses a path that does not exist, and a file', () => {
    const missing = path.join(DIR, 'missing')
    expect(() => resolve({ cwd: missing })).toThrow(
      `${P}request.cwd must be the absolute path of an existing directory: ${JSON.stringify(missing)} cannot be read (ENOENT)`,
    )
    expect(() => resolve({ cwd: FILE })).toThrow(
      `${P}request.cwd must be the absolute path of an existing directory: ${JSON.stringify(FILE)} is not a directory`,
    )
  })
})

describe('timeoutMs', () => {
  it('a number is kept, a larger one capped at the maximum, null means no deadline', () => {
    expect(resolve({ timeoutMs: 250 }).timeoutMs).toBe(250)
    expect(resolve({ timeoutMs: 0.5 }).timeoutMs).toBe(0.5)
    expect(resolve({ timeoutMs: 20000 }).timeoutMs).toBe(20000)
    expect(resolve({ timeoutMs: 20001 }).timeoutMs).toBe(20000)
    expect(resolve({ timeoutMs: Number.MAX_VALUE }).timeoutMs).toBe(20000)
    expect(resolve({ timeoutMs: null }).timeoutMs).toBe(null)
  })

  it.each([
    ['zero', 0, '0'],
    ['negative zero', -0, '0'],
    ['a negative number', -5, '-5'],
    ['NaN', Number.NaN, 'NaN'],
    ['Infinity', Infinity, 'Infinity'],
    ['a numeric string', '500', '"500"'],
    ['a boxed number', Object(500), 'an object'],
    ['a bigint', 500n, '500'],
    ['a boolean', true, 'true'],
  ])('refuses %s, naming the field and what is accepted', (_, timeoutMs, shown) => {
    expect(() => resolve({ timeoutMs })).toThrow(
      new TypeError(
        `${P}request.timeoutMs must be a positive finite number of milliseconds (capped at 20000), null for no elapsed deadline, or omitted for the default 5000; got ${shown}`,
      ),
    )
  })
})

describe('sandboxPolicy', () => {
  it('copies a valid policy, with sessionId when given, and normalises the root', () => {
    const policy = { mode: 'workspace-write', workspaceRoot: `${DIR}/x/..`, sessionId: 's-1', extra: 'dropped' }
    const spec = resolve({ sandboxPolicy: policy })
    expect(spec.sandboxPolicy).toEqual({ mode: 'workspace-write', workspaceRoot: DIR, sessionId: 's-1' })
    expect(spec.sandboxPolicy).not.toBe(policy)
    expect(Object.isFrozen(spec.sandboxPolicy)).toBe(true)
  })

  // Issue 26: a bad policy fails here, naming the field, on both runtimes (the rule is resolve()'s;
  // a TypeScript run has no file system, but the same request on Python would be granted these).
  describe('every path of a policy is an existing directory of its own, with no symbolic link in it', () => {
    const W = path.join(DIR, 'w')
    const OUT = path.join(DIR, 'outside')
    beforeAll(() => {
      fs.mkdirSync(path.join(W, 'sub'), { recursive: true })
      fs.mkdirSync(OUT)
      fs.symlinkSync('/', path.join(DIR, 'to-slash'))
      fs.symlinkSync(OUT, path.join(W, 'planted'))
    })
    const field = 'request.sandboxPolicy.workspaceRoot'
    const must = (f) => `${P}${f} must be the absolute path of an existing directory with no symbolic link in it: `

    it.each(['read-only', 'workspace-write', 'danger-full-access'])("refuses '/' as the workspace (%s)", (mode) => {
      expect(() => resolve({ sandboxPolicy: { mode, workspaceRoot: '/' } })).toThrow(
        new TypeError(
          `${P}${field} must not be the host's root directory, got "/": a sandbox policy confines a run to directories of its own, and '/' would grant the host's whole tree. Name the workspace's own directory`,
        ),
      )
      expect(() => resolve({ sandboxPolicy: { mode, workspaceRoot: '/./tmp/..' } })).toThrow(`${P}${field} must not be the host's root directory`)
    })

    it('refuses a link to / (or any link) as the workspace, and a workspace that is not there', () => {
      for (const root of [path.join(DIR, 'to-slash'), path.join(W, 'planted'), path.join(DIR, 'to-slash', 'tmp')]) {
        expect(() => resolve({ sandboxPolicy: { mode: 'read-only', workspaceRoot: root } })).toThrow(
          new TypeError(
            `${must(field)}${JSON.stringify(root)} passes through a symbolic link, and a sandbox policy's paths are taken literally (a link an earlier run planted must never widen a later run). Pass the real path (fs.realpathSync) of a directory you trust`,
          ),
        )
      }
      expect(() => resolve({ sandboxPolicy: { mode: 'read-only', workspaceRoot: '/nonexistent/root' } })).toThrow(
        new TypeError(`${must(field)}"/nonexistent/root" cannot be read (ENOENT)`),
      )
      expect(() => resolve({ sandboxPolicy: { mode: 'read-only', workspaceRoot: FILE } })).toThrow(
        new TypeError(`${must(field)}${JSON.stringify(FILE)} is not a directory`),
      )
    })

    it('refuses a planted link as cwd under a policy (request.cwd, or config.cwd when it is the default)', () => {
      const planted = path.join(W, 'planted')
      expect(() => resolve({ cwd: planted, sandboxPolicy: { mode: 'read-only', workspaceRoot: path.join(DIR, 'outside') } })).toThrow(
        new TypeError(`${must('request.cwd')}${JSON.stringify(planted)} passes through a symbolic link, and a sandbox policy's paths are taken literally (a link an earlier run planted must never widen a later run). Pass the real path (fs.realpathSync) of a directory you trust`),
      )
      // `/` itself as cwd grants nothing (filePlan), as a systemd service's default cwd would be.
      expect(resolve({ cwd: '/', sandboxPolicy: { mode: 'read-only', workspaceRoot: W } }).cwd).toBe('/')
      // Without a policy cwd grants nothing, and is checked as before.
      expect(resolve({ cwd: planted }).cwd).toBe(planted)
      expect(resolve({ cwd: path.join(W, 'sub'), sandboxPolicy: { mode: 'read-only', workspaceRoot: W } }).cwd).toBe(path.join(W, 'sub'))
    })

    it('under a policy without request.cwd, the run starts in the workspace: never in config.cwd or the process cwd', async () => {
      const other = new Context()
      await other.plugin(IsolatePtcRuntime, { containment: 'thread', cwd: path.join(W, 'planted') })
      for (const mode of ['read-only', 'workspace-write', 'danger-full-access']) {
        expect(other.ptcRuntime.resolve({ ...base, sandboxPolicy: { mode, workspaceRoot: W } }).cwd).toBe(W)
      }
      // Without a policy the config's cwd is the default, as before.
      expect(other.ptcRuntime.resolve(base).cwd).toBe(path.join(W, 'planted'))
      expect(resolve({ sandboxPolicy: { mode: 'read-only', workspaceRoot: W } }).cwd).toBe(W)
    })
  })

  it.each([
    [null, 'null'],
    ['read-only', '"read-only"'],
    [[], 'an array'],
  ])('refuses a policy that is not an object: %s', (sandboxPolicy, shown) => {
    // An array is an object without `mode`: it fails there.
    const message = Array.isArray(sandboxPolicy)
      ? `${P}request.sandboxPolicy.mode must be 'read-only', 'workspace-write' or 'danger-full-access', got undefined`
      : `${P}request.sandboxPolicy must be an object { mode, workspaceRoot, sessionId? } or omitted, got ${shown}`
    expect(() => resolve({ sandboxPolicy })).toThrow(new TypeError(message))
  })

  it.each([
    [undefined, 'undefined'],
    ['READ-ONLY', '"READ-ONLY"'],
    ['full', '"full"'],
    [1, '1'],
  ])('refuses the mode %s', (mode, shown) => {
    expect(() => resolve({ sandboxPolicy: { mode, workspaceRoot: DIR } })).toThrow(
      `${P}request.sandboxPolicy.mode must be 'read-only', 'workspace-write' or 'danger-full-access', got ${shown}`,
    )
  })

  it.each([
    [undefined, 'undefined'],
    ['relative/root', '"relative/root"'],
    ['', '""'],
    ['/root\0', '"/root\\u0000"'],
    [42, '42'],
  ])('refuses the workspaceRoot %s', (workspaceRoot, shown) => {
    expect(() => resolve({ sandboxPolicy: { mode: 'read-only', workspaceRoot } })).toThrow(
      `${P}request.sandboxPolicy.workspaceRoot must be an absolute path, got ${shown}`,
    )
  })

  it('refuses a sessionId that is not a string', () => {
    expect(() => resolve({ sandboxPolicy: { mode: 'read-only', workspaceRoot: DIR, sessionId: 9 } })).toThrow(
      `${P}request.sandboxPolicy.sessionId must be a string or omitted, got 9`,
    )
  })
})

describe('hostile requests', () => {
  it.each([null, undefined, 'return 1', 5, () => 1])('refuses a request that is not an object: %s', (request) => {
    expect(() => runtime.resolve(request)).toThrow(TypeError)
    expect(() => runtime.resolve(request)).toThrow(`${P}resolve(request): request must be an object, got `)
  })

  it.each(['program', 'bindings', 'signal', 'cwd', 'timeoutMs', 'sandboxPolicy'])(
    'a getter on %s that throws is misuse naming the field',
    (field) => {
      const request = { ...base }
      Object.defineProperty(request, field, { get: () => { throw new Error('boom') } })
      expect(() => runtime.resolve(request)).toThrow(new TypeError(`${P}request.${field} could not be read: boom`))
    },
  )

  it('a revoked proxy anywhere is refused with the field it was found in', () => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    expect(() => runtime.resolve(proxy)).toThrow(`${P}request.program could not be read: `)
    expect(() => resolve({ cwd: proxy })).toThrow(`${P}request.cwd must be the absolute path of an existing directory, got an object`)
    expect(() => resolve({ sandboxPolicy: proxy })).toThrow(`${P}request.sandboxPolicy.mode could not be read: `)
  })

  it('policy getters that throw are misuse naming the field; a throwing proxy too', () => {
    const policy = { mode: 'read-only' }
    Object.defineProperty(policy, 'workspaceRoot', { get: () => { throw new RangeError('nope') } })
    expect(() => resolve({ sandboxPolicy: policy })).toThrow(`${P}request.sandboxPolicy.workspaceRoot could not be read: nope`)
    const trap = new Proxy({}, { get: () => { throw new Error('trapped') } })
    expect(() => runtime.resolve(trap)).toThrow(`${P}request.program could not be read: trapped`)
  })

  it('reads each field exactly once (a getter cannot pass validation and then change)', () => {
    const reads = {}
    const request = {}
    const values = { program: 'return 1', bindings: [], cwd: DIR, timeoutMs: 100, sandboxPolicy: { mode: 'read-only', workspaceRoot: DIR } }
    for (const [key, value] of Object.entries(values)) {
      Object.defineProperty(request, key, {
        get: () => {
          reads[key] = (reads[key] ?? 0) + 1
          return reads[key] === 1 ? value : '/changed'
        },
      })
    }
    const spec = runtime.resolve(request)
    expect(spec.cwd).toBe(DIR)
    expect(reads).toEqual({ program: 1, bindings: 1, cwd: 1, timeoutMs: 1, sandboxPolicy: 1 })
  })
})

describe('run() accepts a well-formed spec, as the host\'s backends do (issue 28), every field checked again', () => {
  const UNRESOLVED = `${P}run(spec) needs a resolved spec: call runtime.run(runtime.resolve(request))`

  it('runs the spec resolve() returned', async () => {
    expect(await runtime.run(runtime.resolve(base))).toEqual({ logs: [], value: 1 })
  })

  it.each([
    ['a copy of a resolved spec', () => ({ ...runtime.resolve(base) })],
    ['a spread with a field changed', () => ({ ...runtime.resolve(base), timeoutMs: 100, program: 'return 2' })],
    ['a spec the host built', () => ({ ...base, cwd: DIR, timeoutMs: null })],
  ])('runs %s', async (_, make) => {
    const spec = make()
    expect(await runtime.run(spec)).toEqual({ logs: [], value: spec.program === 'return 2' ? 2 : 1 })
  })

  it.each([
    ['a request without cwd', () => ({ ...base }), new TypeError(`${UNRESOLVED}: spec.cwd is missing`)],
    ['a spec without timeoutMs', () => ({ ...base, cwd: DIR }), new TypeError(`${UNRESOLVED}: spec.timeoutMs is missing`)],
    ['a deadline past the cap', () => ({ ...base, cwd: DIR, timeoutMs: 20001 }), new TypeError(`${UNRESOLVED}: spec.timeoutMs 20001 exceeds config.maxTimeoutMs (20000)`)],
    ['a relative cwd', () => ({ ...base, cwd: 'rel', timeoutMs: 1 }), new TypeError(`${P}spec.cwd must be the absolute path of an existing directory, got "rel"`)],
    ['a bad mode', () => ({ ...base, cwd: DIR, timeoutMs: 1, sandboxPolicy: { mode: 'x', workspaceRoot: DIR } }), new TypeError(`${P}spec.sandboxPolicy.mode must be 'read-only', 'workspace-write' or 'danger-full-access', got "x"`)],
    ['undefined', () => undefined, new TypeError(`${P}run(spec): spec must be an object, got undefined`)],
  ])('rejects %s, naming the field', async (_, make, error) => {
    await expect(runtime.run(make())).rejects.toThrow(error)
  })

  it('a resolved spec whose workspace was swapped for a link is checked again, and refused', async () => {
    const W = path.join(DIR, 'swapped')
    fs.mkdirSync(W)
    const spec = resolve({ sandboxPolicy: { mode: 'read-only', workspaceRoot: W } })
    fs.rmSync(W, { recursive: true })
    fs.symlinkSync('/', W)
    // The spec object itself was resolved here: the helper (Python) checks it again at its run;
    // a copy is checked again at once.
    await expect(runtime.run({ ...spec })).rejects.toThrow(`${P}spec.sandboxPolicy.workspaceRoot must be the absolute path of an existing directory with no symbolic link in it`)
  })

  it("runs another runtime's spec, checked again against this runtime's cap", async () => {
    const other = new Context()
    const fiber = await other.plugin(IsolatePtcRuntime, { containment: 'thread', cwd: DIR })
    const foreign = other.ptcRuntime.resolve(base)
    await expect(runtime.run(foreign)).rejects.toThrow(`${UNRESOLVED}: spec.timeoutMs 120000 exceeds config.maxTimeoutMs (20000)`)
    expect(await runtime.run(other.ptcRuntime.resolve({ ...base, timeoutMs: 20000 }))).toEqual({ logs: [], value: 1 })
    await fiber.dispose()
  })

  it('rejects invalid bindings of a resolved spec as on the old seam', async () => {
    const spec = resolve({ bindings: [{ global: '$tools', functions: {} }] })
    await expect(runtime.run(spec)).rejects.toThrow(/\$tools/)
  })

  it('after dispose: resolve() throws and run() rejects', async () => {
    const other = new Context()
    const fiber = await other.plugin(IsolatePtcRuntime, { containment: 'thread', cwd: DIR })
    const live = other.ptcRuntime
    const spec = live.resolve(base)
    await fiber.dispose()
    expect(() => live.resolve(base)).toThrow(`${P}resolve() after disposal`)
    await expect(live.run(spec)).rejects.toThrow(`${P}run() after disposal`)
  })
})

describe('config of the seam', () => {
  const load = async (Class, config) => {
    const other = new Context()
    return other.plugin(Class, Class === PythonPtcRuntime ? { pythonBin: PYTHON, ...config } : { containment: 'thread', ...config })
  }

  it.each([
    ['IsolatePtcRuntime', IsolatePtcRuntime],
    ['PythonPtcRuntime', PythonPtcRuntime],
  ])('%s refuses each bad key, naming it', async (_, Class) => {
    const cases = [
      [{ timeoutMs: 0 }, `${P}config.timeoutMs must be a positive number of milliseconds of at most 2147483647, got 0`],
      [{ timeoutMs: -0.5 }, `${P}config.timeoutMs must be a positive number of milliseconds of at most 2147483647, got -0.5`],
      [{ maxTimeoutMs: 2147483648 }, `${P}config.maxTimeoutMs must be a positive number of milliseconds of at most 2147483647, got 2147483648`],
      [{ cwd: 'rel' }, `${P}config.cwd must be the absolute path of an existing directory, got "rel"`],
      [{ cwd: FILE }, `${P}config.cwd must be the absolute path of an existing directory: ${JSON.stringify(FILE)} is not a directory`],
    ]
    for (const [config, message] of cases) await expect(load(Class, config)).rejects.toThrow(message)
    for (const maxMessageBytes of [0, 1.5, 2 ** 32, '5']) {
      const message = `${P}config.maxMessageBytes must be an integer from 1 to 4294967295, got ${JSON.stringify(maxMessageBytes)}`
      expect(() => new Class(new Context(), { maxMessageBytes })).toThrow(message)
    }
    // The old seam's ceiling is refused, never silently ignored.
    expect(() => new Class(new Context(), { maxWallMs: 5000 })).toThrow(
      `${P}config.maxWallMs is not a key of ctx.ptcRuntime: a run's deadline is its request's timeoutMs`,
    )
    await expect(load(Class, { maxWallMs: -1 })).rejects.toThrow(`${P}config.maxWallMs is not a key of ctx.ptcRuntime`)
    expect(() => new Class(new Context(), { timeoutMs: '5' })).toThrow(
      `${P}config.timeoutMs must be a positive number of milliseconds of at most 2147483647, got "5"`,
    )
    if (Class === PythonPtcRuntime) {
      // cordis checks the schema first (a wrong type or mode); constructed directly, the class does.
      await expect(load(Class, { sandboxMode: 'none' })).rejects.toThrow('$.sandboxMode expected')
      expect(() => new Class(new Context(), { sandboxMode: 'none' })).toThrow(
        `${P}config.sandboxMode must be 'read-only', 'workspace-write' or 'danger-full-access', got "none"`,
      )
    } else {
      // The host's Node backend's graceMs is accepted (a sandbox process needs none), and checked.
      expect(() => new Class(new Context(), { graceMs: 0 })).toThrow(
        `${P}config.graceMs must be a positive number of milliseconds of at most 2147483647, got 0`,
      )
      for (const sandboxMode of ['read-only', 'none']) {
        await expect(load(Class, { sandboxMode })).rejects.toThrow(
          `${P}config.sandboxMode is not a key of the TypeScript runtime: a program has no file system under any policy`,
        )
      }
    }
  })

  it('descriptors follow the config; the backend keys still apply', async () => {
    const other = new Context()
    const fiber = await other.plugin(IsolatePtcRuntime, {
      containment: 'thread',
      timeoutMs: 1000,
      maxTimeoutMs: 1000,
      graceMs: 3000,
      computeMs: 77,
    })
    const rt = other.ptcRuntime
    expect(rt.timeout).toEqual({ defaultMs: 1000, maxMs: 1000 })
    expect(Object.isFrozen(rt.timeout)).toBe(true)
    expect(rt.sandboxMode).toBeUndefined()
    expect([rt.language, rt.isolation, rt.containment]).toEqual(['typescript', 'v8-isolate', 'thread'])
    expect(await rt.run(rt.resolve({ ...base, program: 'for (;;) {}', timeoutMs: null }))).toEqual({
      logs: [],
      error: { kind: 'timeout', message: 'compute budget exhausted (77ms busy) at program.ts:1:1' },
    })
    await expect(load(IsolatePtcRuntime, { computeMs: -1 })).rejects.toThrow(`${P}config.computeMs must be a positive number, got -1`)
    await fiber.dispose()
  })

  it('Python: descriptors, and its sandboxMode is the configured one where the kernel enforces file policies', async () => {
    const other = new Context()
    const fiber = await other.plugin(PythonPtcRuntime, { pythonBin: PYTHON, timeoutMs: 3000, sandboxMode: 'workspace-write' })
    const rt = other.ptcRuntime
    expect([rt.language, rt.isolation]).toEqual(['python', 'process'])
    expect(rt.timeout).toEqual({ defaultMs: 3000, maxMs: 600000 })
    // The helper's layers hold here (ptc-run.test.mjs: undefined where they do not).
    expect(rt.sandbox).toMatchObject({ helper: true, privateRoot: true })
    expect(rt.sandboxMode).toBe('workspace-write')
    expect(rt.resolve(base)).toEqual({ ...base, cwd: process.cwd(), timeoutMs: 3000 })
    await fiber.dispose()
  })
})
