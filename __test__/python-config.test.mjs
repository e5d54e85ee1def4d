// PythonCodeRuntime: descriptors, config schema and load-time validation, interpreter resolution
// and the version probe (docs/python.md#load-time-validation, docs/python.md#interpreter;
// docs/acceptance.md, cases 18 and 24–36: the number at the end of a title).
import fs from 'node:fs'
import path from 'node:path'
import { Context } from 'cordis'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { PythonCodeRuntime } from '../lib/index.mjs'
import PythonDefault from '../lib/python.mjs'
import { pythonFrameCap, validatePythonConfig } from '../lib/python-runtime.mjs'
import { PATH_PYTHON, PYTHON, URLS, probeAnswer, childJson, fakePython, liveProcesses, load, privateTmpdir, runNode, script, unreapedChildren } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 20_000, hookTimeout: 20_000 })
const TMP = privateTmpdir('py-config')

const rejects = (config) => new Context().plugin(PythonCodeRuntime, { pythonBin: PYTHON, ...config })

afterAll(() => {
  expect(liveProcesses(TMP)).toEqual([])
  expect(unreapedChildren()).toEqual([])
  fs.rmSync(TMP, { recursive: true, force: true })
})

describe('descriptors and schema', () => {
  it('has the python descriptors and registers as codeRuntime (24)', async () => {
    const { ctx, fiber, runtime } = await load(PythonCodeRuntime)
    expect(runtime.language).toBe('python')
    expect(runtime.isolation).toBe('process')
    expect(ctx.codeRuntime.language).toBe('python')
    expect(PythonDefault).toBe(PythonCodeRuntime)
    await fiber.dispose()
    expect(ctx.get('codeRuntime')).toBeUndefined()
  })

  it('fills the reference defaults', () => {
    expect(PythonCodeRuntime.Config({})).toEqual({
      cpuSeconds: 60,
      maxWallMs: 600000,
      addressSpaceMb: 512,
      maxLogBytes: 65536,
      maxValueBytes: 32768,
      graceMs: 3000,
      maxPendingCalls: 128,
      pythonBin: 'python3',
      allowUnsandboxed: false,
      traceContent: false,
    })
  })

  it('rejects non-numbers in the schema itself', async () => {
    await expect(rejects({ cpuSeconds: '60' })).rejects.toThrow(/expected number/)
  })

  it('loads with no config at all, through the PATH shim, and spawns the real interpreter', async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(PythonCodeRuntime)
    const runtime = ctx.get('codeRuntime')
    expect(runtime.interpreter.resolved).toMatch(/\/python3$/)
    expect(runtime.interpreter.executable).toBe(PATH_PYTHON)
    const r = await runtime.run({
      program: 'import os, sys\nreturn [sys.executable, sorted(os.environ)]',
      bindings: [],
    })
    expect(r.value[0]).toBe(PATH_PYTHON)
    // Only TMPDIR is passed; CPython itself may add LC_CTYPE when it coerces a C locale (PEP 538).
    expect(r.value[1].filter((k) => k !== 'LC_CTYPE')).toEqual(['TMPDIR'])
    await fiber.dispose()
  })

  it('a second codeRuntime provider is refused by cordis', async () => {
    const { ctx, fiber } = await load(PythonCodeRuntime)
    await expect(ctx.plugin(PythonCodeRuntime, { pythonBin: PYTHON })).rejects.toThrow(/registered/)
    await fiber.dispose()
  })
})

// docs/python.md#load-time-validation
describe('load-time validation', () => {
  it('non-positive numbers (25)', async () => {
    await expect(rejects({ cpuSeconds: 0 })).rejects.toThrow(/cpuSeconds must be a positive number/)
    await expect(rejects({ maxWallMs: -1 })).rejects.toThrow('code-runtime-native: config.maxWallMs must be a positive number, got -1')
    await expect(rejects({ graceMs: NaN })).rejects.toThrow('config.graceMs must be a positive number, got NaN')
    await expect(rejects({ addressSpaceMb: Infinity })).rejects.toThrow('config.addressSpaceMb must be a positive number, got Infinity')
    await expect(rejects({ cpuSeconds: 1.5 })).rejects.toThrow(/cpuSeconds must be a positive integer, got 1.5/)
  })

  it('non-integer budgets (26)', async () => {
    await expect(rejects({ maxLogBytes: 100.5 })).rejects.toThrow(/maxLogBytes must be a positive integer/)
    await expect(rejects({ maxValueBytes: 100.5 })).rejects.toThrow(
      'code-runtime-native: config.maxValueBytes must be a positive integer (the child reads it as an int, so a float diverges from the host), got 100.5',
    )
  })

  it('exact integers and their boundaries (27)', async () => {
    await expect(rejects({ addressSpaceMb: 1e308 })).rejects.toThrow(
      'code-runtime-native: config.addressSpaceMb must be at most 8589934591 (its byte count crosses the wire as an exact integer), got 1e+308',
    )
    await expect(rejects({ cpuSeconds: 1e100 })).rejects.toThrow(
      'code-runtime-native: config.cpuSeconds must be at most 9007199254740990 (it and its +1 hard limit cross to setrlimit as exact integers), got 1e+100',
    )
    const mb = Math.floor(Number.MAX_SAFE_INTEGER / 2 ** 20)
    const { fiber } = await load(PythonCodeRuntime, { addressSpaceMb: mb, cpuSeconds: Number.MAX_SAFE_INTEGER - 1 })
    await fiber.dispose()
    await expect(rejects({ addressSpaceMb: mb + 1 })).rejects.toThrow(/addressSpaceMb must be at most 8589934591/)
    await expect(rejects({ cpuSeconds: Number.MAX_SAFE_INTEGER })).rejects.toThrow(/cpuSeconds must be at most 9007199254740990/)
  })

  it('frame-cap limits (28)', async () => {
    await expect(rejects({ maxValueBytes: 67108801 })).rejects.toThrow(/must not exceed 67108800/)
    await expect(rejects({ maxLogBytes: 67108801 })).rejects.toThrow(
      'code-runtime-native: config.maxLogBytes must not exceed 67108800 (a payload that large cannot cross the fd-3 frame PARSER, which rejects raw frames past 67108864 bytes before decoding to bound host memory — a larger budget would admit a config whose honest child frames the host then rejects as a worker-exit), got 67108801',
    )
    const { fiber } = await load(PythonCodeRuntime, { maxValueBytes: 67108800, addressSpaceMb: 4096 })
    await fiber.dispose()
  })

  it('the heap clause when the host heap lowers the cap (pure)', () => {
    const heap = 150 * 2 ** 20
    const cap = pythonFrameCap(heap)
    expect(cap).toBe(Math.floor((heap - 67108864) / 16))
    const base = { cpuSeconds: 60, maxWallMs: 1000, addressSpaceMb: 1024, maxLogBytes: 65536, graceMs: 100, pythonBin: 'x' }
    expect(() => validatePythonConfig({ ...base, maxValueBytes: 50 * 2 ** 20 }, 'linux', heap)).toThrow(
      `code-runtime-native: config.maxValueBytes must not exceed ${cap - 64} (a payload that large cannot cross the fd-3 frame PARSER, which rejects raw frames past ${cap} bytes before decoding to bound host memory — this host's heap limits the parse to ${cap} bytes, so the protocol cap of 67108864 would be unsafe — a larger budget would admit a config whose honest child frames the host then rejects as a worker-exit), got ${50 * 2 ** 20}`,
    )
    expect(validatePythonConfig({ ...base, maxValueBytes: cap - 64 }, 'linux', heap)).toBe(cap)
  })

  it('the log floor', async () => {
    await expect(rejects({ maxLogBytes: 63 })).rejects.toThrow(
      'code-runtime-native: config.maxLogBytes must be at least 64 (a smaller budget cannot serialize the truncation marker itself, so a marker-only truncated run would return more than the configured cap), got 63',
    )
  })

  it('pythonBin shape (30)', async () => {
    await expect(rejects({ pythonBin: '' })).rejects.toThrow(/pythonBin must be a non-empty path without NUL bytes/)
    await expect(rejects({ pythonBin: 'py\0thon3' })).rejects.toThrow(
      'code-runtime-native: config.pythonBin must be a non-empty path without NUL bytes, got "py\\u0000thon3"',
    )
  })

  it('timer ranges and their exact maxima (34)', async () => {
    await expect(rejects({ maxWallMs: 2147483648 })).rejects.toThrow(
      'code-runtime-native: config.maxWallMs must not exceed 2147483647 (setTimeout clamps a larger delay to 1ms), got 2147483648',
    )
    await expect(rejects({ graceMs: 2147481648 })).rejects.toThrow(
      'code-runtime-native: config.graceMs must not exceed 2147481647 (its close deadline adds 2000ms, and setTimeout clamps a larger delay to 1ms), got 2147481648',
    )
    const { fiber } = await load(PythonCodeRuntime, { maxWallMs: 2147483647, graceMs: 2147481647 })
    await fiber.dispose()
  })

  it('the address-space gate', async () => {
    await expect(rejects({ addressSpaceMb: 64 })).rejects.toThrow(
      'code-runtime-native: config.addressSpaceMb must exceed the 67108864-byte interpreter baseline with room for the output budgets, so the child has address space left to build and encode them; got 64 MiB (67108864 bytes)',
    )
    await expect(rejects({ maxValueBytes: 39146838 })).rejects.toThrow(
      'code-runtime-native: config.maxValueBytes times the 12x worst-case Unicode expansion must fit within the 469762048 bytes left after the 67108864-byte interpreter baseline within the 536870912-byte addressSpaceMb, so a near-budget output truncates rather than breaching RLIMIT_AS as worker-exit; got 39146838 against a limit of 39146837',
    )
    const { fiber } = await load(PythonCodeRuntime, { maxValueBytes: 39146837, maxLogBytes: 39146837 })
    await fiber.dispose()
  })

  // docs/python.md#load-time-validation
  it('checks run in the documented order', async () => {
    // A bad pythonBin is reported before timer ranges; byte budgets before the address-space gate.
    await expect(rejects({ pythonBin: '', maxWallMs: 2147483648 })).rejects.toThrow(/pythonBin must be a non-empty/)
    await expect(rejects({ maxValueBytes: 67108801, addressSpaceMb: 65 })).rejects.toThrow(/must not exceed 67108800/)
    await expect(rejects({ cpuSeconds: -1, maxWallMs: -1 })).rejects.toThrow(/cpuSeconds/)
  })

  it('refuses win32 (35)', async () => {
    const original = Object.getOwnPropertyDescriptor(process, 'platform')
    Object.defineProperty(process, 'platform', { value: 'win32' })
    try {
      await expect(rejects({})).rejects.toThrow(
        'code-runtime-native: this backend requires a Unix platform (POSIX rlimits, fd-3 stdio, process-group signals); it cannot run on Windows',
      )
    } finally {
      Object.defineProperty(process, 'platform', original)
    }
  })

  it('with --max-old-space-size=128, a 50 MiB budget is refused and a worst-shape frame at the derived cap parses (29)', async () => {
    const dir = fs.mkdtempSync(path.join(TMP, 'heap-'))
    const out = await runNode(
      dir,
      `
      import v8 from 'node:v8'
      import { Context } from '${URLS.cordis}'
      import { PythonCodeRuntime } from '${URLS.index}'
      import { pythonFrameCap } from '${URLS.pythonRuntime}'
      const cap = pythonFrameCap()
      const result = { cap, heap: v8.getHeapStatistics().heap_size_limit }
      try {
        await new Context().plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(PYTHON)}, maxValueBytes: 50 * 2 ** 20, addressSpaceMb: 1024 })
      } catch (e) { result.refused = e.message }
      const ctx = new Context()
      const fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(PYTHON)}, maxValueBytes: cap - 64, addressSpaceMb: 1024 })
      // A dict of unique keys, the worst shape for a JSON parser, filling the value budget: each
      // member "k00000000001":0 is 16 bytes plus a comma.
      const n = Math.floor((cap - 65) / 17)
      const r = await ctx.codeRuntime.run({ program: 'return {("k%011d" % i): 0 for i in range(' + n + ')}', bindings: [] })
      result.keys = r.error ? r.error : Object.keys(r.value).length
      result.n = n
      await fiber.dispose()
      console.log(JSON.stringify(result))
      `,
      { nodeArgs: ['--max-old-space-size=128'] },
    )
    const result = childJson(out)
    expect(result.cap).toBeLessThan(67108864)
    expect(result.refused).toMatch(/must not exceed/)
    expect(result.refused).toContain(`this host's heap limits the parse to ${result.cap} bytes`)
    expect(result.keys).toBe(result.n)
  })
})

// docs/python.md#interpreter
describe('interpreter resolution and probe', () => {
  const dir = fs.mkdtempSync(path.join(TMP, 'bins-'))

  it('paths that are not executable regular files (31)', async () => {
    const noX = path.join(dir, 'no-x-python')
    fs.writeFileSync(noX, '#!/bin/sh\n', { mode: 0o644 })
    const subdir = fs.mkdtempSync(path.join(dir, 'adir-'))
    for (const bin of [path.join(dir, 'missing-python'), noX, subdir, './definitely-not-there-python']) {
      await expect(new Context().plugin(PythonCodeRuntime, { pythonBin: bin })).rejects.toThrow(
        `code-runtime-native: config.pythonBin ${JSON.stringify(bin)} is not an executable regular file`,
      )
    }
  })

  it('a basename that does not resolve on PATH', async () => {
    await expect(new Context().plugin(PythonCodeRuntime, { pythonBin: 'no-such-python-anywhere' })).rejects.toThrow(
      'code-runtime-native: config.pythonBin "no-such-python-anywhere" does not resolve on PATH',
    )
  })

  it('the probe matrix (32)', async () => {
    const cases = [
      ['cpython 2 99 0', 'must be CPython 3.10 or newer, got cpython 2.99.0'],
      ['cpython 3 9 6', 'must be CPython 3.10 or newer, got cpython 3.9.6'],
      ['pypy 3 10 0', 'must be CPython, got pypy'],
      ['Python 3.11.7', 'did not report a CPython version'],
      ['cpython 3 11', 'did not report a CPython version'],
    ]
    for (const [version, message] of cases) {
      const bin = fakePython(dir, `v-${version.replaceAll(/\W/g, '_')}`, { version })
      await expect(new Context().plugin(PythonCodeRuntime, { pythonBin: bin })).rejects.toThrow(
        `code-runtime-native: config.pythonBin ${JSON.stringify(bin)} ${message}`,
      )
    }
    const exit7 = fakePython(dir, 'exit7', { probe: 'exit 7' })
    await expect(new Context().plugin(PythonCodeRuntime, { pythonBin: exit7 })).rejects.toThrow(
      `code-runtime-native: config.pythonBin ${JSON.stringify(exit7)} failed the CPython version probe: exited with code 7`,
    )
    // Forward compatible: 4.0.0 loads.
    const four = fakePython(dir, 'four', { version: 'cpython 4 0 0' })
    const ctx = new Context()
    const fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: four })
    expect(ctx.codeRuntime.interpreter.version).toBe('cpython 4 0 0')
    expect(ctx.codeRuntime.interpreter.executable).toBe(four)
    await fiber.dispose()
  })

  it('a relative pythonBin resolves against the cwd to an absolute path (32)', async () => {
    const rel = path.relative(process.cwd(), fakePython(dir, 'relative-python'))
    expect(rel.startsWith('/')).toBe(false)
    const ctx = new Context()
    const fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: rel })
    expect(ctx.codeRuntime.interpreter.resolved).toBe(path.resolve(rel))
    await fiber.dispose()
  })

  it('an explicit executable pythonBin works through load and run (33)', async () => {
    const { runtime, fiber } = await load(PythonCodeRuntime)
    expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({ logs: [], value: 1 })
    await fiber.dispose()
  })

  it('resolves once at load; skips relative PATH entries and directories named python3 (36)', async () => {
    const first = fs.mkdtempSync(path.join(dir, 'first-'))
    const second = fs.mkdtempSync(path.join(dir, 'second-'))
    const shadow = fs.mkdtempSync(path.join(dir, 'shadow-'))
    fs.mkdirSync(path.join(shadow, 'python3'), { mode: 0o755 })
    const wrapper = (marker) =>
      `#!/bin/sh\nif [ "$1" = "-I" ] && [ "$2" = "-c" ]; then ${probeAnswer('cpython 3 11 7')}; exit 0; fi\nexport MARKER=${marker}\nexec ${PYTHON} "$@"\n`
    script(first, 'python3', wrapper('first'))
    script(second, 'python3', wrapper('second'))
    script(dir, 'python3', wrapper('relative'))
    const savedPath = process.env.PATH
    const savedCwd = process.cwd()
    process.chdir(dir)
    process.env.PATH = `.::${shadow}:${first}:${second}`
    try {
      const ctx = new Context()
      const fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: 'python3' })
      expect(ctx.codeRuntime.interpreter.resolved).toBe(path.join(first, 'python3'))
      process.env.PATH = `${second}`
      const r = await ctx.codeRuntime.run({ program: 'import os\nreturn os.environ.get("MARKER")', bindings: [] })
      expect(r).toEqual({ logs: [], value: 'first' })
      await fiber.dispose()
    } finally {
      process.env.PATH = savedPath
      process.chdir(savedCwd)
    }
  })

  it('a probe that hangs is SIGKILLed after 5000 ms; it is invoked with -I -c (18)', async () => {
    const argsFile = path.join(dir, 'probe-args')
    const marker = `crn-probe-sleeper-${process.pid}`
    const bin = fakePython(dir, 'hanging-python', {
      probe: `echo "$@" > ${argsFile}; exec ${PYTHON} -c 'import time; time.sleep(30)' ${marker}`,
    })
    const started = Date.now()
    await expect(new Context().plugin(PythonCodeRuntime, { pythonBin: bin })).rejects.toThrow(
      `code-runtime-native: config.pythonBin ${JSON.stringify(bin)} failed the CPython version probe: timed out after 5000ms`,
    )
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(4900)
    expect(elapsed).toBeLessThan(9000)
    expect(fs.readFileSync(argsFile, 'utf8')).toMatch(/^-I -c /)
    expect(liveProcesses(marker)).toEqual([])
  })
})
