// `executionInstructions` of the TypeScript runtime is model-facing: every claim must hold. The
// text is pinned by a golden copy (a change is a deliberate edit of both), and checked against
// real runs: every global it names exists, every API it says is absent is absent, nothing beyond
// ECMAScript exists that it does not name (compared with the globals of this very Node), and its
// budgets, errors and syntax rules are what a run does.
import fs from 'node:fs'
import vm from 'node:vm'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IsolatePtcRuntime, PythonPtcRuntime } from 'code-runtime-native'
import { PYTHON } from './python-helpers.mjs'

const GOLDEN = fs.readFileSync(new URL('./golden/ptc-instructions-typescript.txt', import.meta.url), 'utf8')
/** ECMAScript globals newer than some Node this suite runs on (its V8 lacks them; the isolate's has them). */
const NEWER_ECMASCRIPT = ['Iterator', 'SuppressedError', 'DisposableStack', 'AsyncDisposableStack', 'Float16Array']

let fiber
let runtime
let text
beforeAll(async () => {
  const ctx = new Context()
  fiber = await ctx.plugin(IsolatePtcRuntime, { computeMs: 200, maxOutputBytes: 4096, maxOldGenerationSizeMb: 64 })
  runtime = ctx.ptcRuntime
  text = runtime.executionInstructions
})
afterAll(() => fiber.dispose())

const run = (program, bindings = []) => runtime.run(runtime.resolve({ program, bindings }))
/** The backticked names of the line that starts with `label`, up to the first parenthesis. */
const named = (label) => {
  const line = text.split('\n').find((l) => l.startsWith(label))
  expect(line, `a line starting ${label}`).toBeDefined()
  return [...line.slice(label.length).split(' (')[0].matchAll(/`([^`]+)`/g)].map((m) => m[1])
}

describe('the text', () => {
  it('is the golden copy for the default budgets', async () => {
    const ctx = new Context()
    const defaults = await ctx.plugin(IsolatePtcRuntime, { containment: 'thread' })
    expect(`${ctx.ptcRuntime.executionInstructions}\n`).toBe(GOLDEN)
    await defaults.dispose()
  })

  it("states this runtime's budgets", () => {
    expect(text).toContain('Budgets: 200 ms of CPU time')
    expect(text).toContain('a 64 MiB heap, 4096 bytes of output')
  })
})

describe('against a real run', () => {
  it('every global it names exists, with the members it says', async () => {
    const globals = named("Globals besides ECMAScript's: ")
    expect(globals.length).toBeGreaterThan(10)
    const present = await run(`return ${JSON.stringify(globals)}.filter((n) => typeof globalThis[n] === 'undefined')`)
    expect(present).toStrictEqual({ logs: [], value: [] })
    const members = await run(`return [
      typeof crypto.getRandomValues, typeof crypto.randomUUID, typeof performance.now,
      Object.getOwnPropertyNames(process).sort(), Object.keys(process.env).length,
      typeof process.stdout.write, typeof process.stderr.write, typeof process.exit]`)
    expect(members.value).toStrictEqual([
      'function', 'function', 'function', ['env', 'exit', 'stderr', 'stdout'], 0, 'function', 'function', 'function',
    ])
  })

  it('every API it says is absent is absent', async () => {
    const absent = named('Not available: ')
    const identifiers = absent.filter((n) => /^\w+$/.test(n))
    expect(identifiers).toEqual(absent)
    expect(await run(`return ${JSON.stringify(identifiers)}.filter((n) => n in globalThis)`)).toStrictEqual({ logs: [], value: [] })
  })

  it('import() loads a data: URL of JavaScript and node:vm, and nothing else it names', async () => {
    expect(text).toContain('`import()` loads only `data:` URLs of JavaScript modules and the built-in `node:vm` (no package, no file, no other `node:` module)')
    const module = `data:text/javascript,${encodeURIComponent('export const two = 2')}`
    const loaded = await run(`const { two } = await import(${JSON.stringify(module)}); const vm = await import('node:vm'); return [two, typeof vm.Script]`)
    expect(loaded).toStrictEqual({ logs: [], value: [2, 'function'] })
    for (const specifier of ['node:fs', 'fs', './local.js', 'file:///etc/passwd', 'https://example.com/m.js', 'node:child_process']) {
      const refused = await run(`await import(${JSON.stringify(specifier)})`)
      expect(refused.error.kind).toBe('exception')
      expect(refused.error.message).toMatch(/^TypeError: import\(\) is not available in this runtime: programs can load only data: URLs/)
    }
  })

  it('the working directory reaches no program: no file can be read or written under any policy', async () => {
    expect(text).toContain('The working directory a call names matters only to the host functions the program calls')
    const probe = "return [typeof require, typeof process.cwd, typeof Deno, Object.keys(process).sort()]"
    for (const mode of ['read-only', 'workspace-write', 'danger-full-access']) {
      const spec = runtime.resolve({ program: probe, bindings: [], sandboxPolicy: { mode, workspaceRoot: process.cwd() } })
      const result = await runtime.run(spec)
      expect(result.value).toStrictEqual(['undefined', 'undefined', 'undefined', ['env', 'exit', 'stderr', 'stdout']])
    }
  })

  it('nothing beyond ECMAScript exists that it does not name (against this Node)', async () => {
    const globals = named("Globals besides ECMAScript's: ")
    const ecmascript = new Set(vm.runInNewContext('Object.getOwnPropertyNames(globalThis)'))
    const { value: own } = await run('return Object.getOwnPropertyNames(globalThis)')
    const unnamed = own.filter((n) => !ecmascript.has(n) && !globals.includes(n))
    expect(unnamed.filter((n) => !NEWER_ECMASCRIPT.includes(n))).toEqual([])
    // Each global this Node has beyond ECMAScript is in the isolate exactly when the text names it.
    for (const name of Object.getOwnPropertyNames(globalThis).filter((n) => !ecmascript.has(n))) {
      expect({ name, inIsolate: own.includes(name) }).toEqual({ name, inIsolate: globals.includes(name) })
    }
  })

  it('no import statement or require; only erasable TypeScript', async () => {
    expect(text).toContain('there is no `import` statement and no `require`')
    expect((await run("import fs from 'node:fs'\nreturn 1")).error.kind).toBe('exception')
    expect((await run('enum A { B }\nreturn 1')).error.message).toMatch(/enum is not supported/)
    expect(await run('const n: number = 2\nreturn n')).toStrictEqual({ logs: [], value: 2 })
  })

  it("a failed host call rejects with the namespace's error class and the function's name", async () => {
    const bindings = [{
      global: 'tools',
      functions: { search: async () => { throw new Error('no results') } },
      errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' },
    }]
    const program = 'try { await tools.search({}) } catch (e) { return [e instanceof ToolCallError, e.toolName, e.message] }'
    expect(await run(program, bindings)).toStrictEqual({ logs: [], value: [true, 'search', 'no results'] })
  })

  it('output is what it prints and returns; each budget ends a run with an error that names it', async () => {
    expect(await run("console.info('a'); process.stdout.write('b'); return 1")).toStrictEqual({ logs: ['a', 'b'], value: 1 })
    expect(await run('for (;;) {}')).toStrictEqual({ logs: [], error: { kind: 'timeout', message: 'compute budget exhausted (200ms busy) at program.ts:1:1' } })
    // Waiting for timers is free: 400 ms asleep under a 200 ms CPU budget.
    expect(await run("await new Promise((r) => setTimeout(r, 400)); return 'ok'")).toStrictEqual({ logs: [], value: 'ok' })
    expect((await run("console.log('x'.repeat(5000))")).error.kind).toBe('output-limit')
    const spec = runtime.resolve({ program: 'await new Promise(() => setTimeout(() => {}, 5000))', bindings: [], timeoutMs: 100 })
    expect(await runtime.run(spec)).toStrictEqual({ logs: [], error: { kind: 'timeout', message: 'execution deadline reached (100ms)' } })
  })

  it('a fresh isolate per call: nothing survives', async () => {
    expect(await run('globalThis.kept = 1; return 1')).toStrictEqual({ logs: [], value: 1 })
    expect(await run("return typeof kept")).toStrictEqual({ logs: [], value: 'undefined' })
  })
})

describe('Python', () => {
  it("names the probed interpreter and this runtime's budgets", async () => {
    const ctx = new Context()
    const python = await ctx.plugin(PythonPtcRuntime, { pythonBin: PYTHON, cpuSeconds: 7, maxLogBytes: 1000, maxValueBytes: 500 })
    const version = ctx.ptcRuntime.interpreter.version.match(/\d+/g).slice(0, 3).join('.')
    const instructions = ctx.ptcRuntime.executionInstructions
    expect(instructions).toContain(`Each call runs in a fresh CPython ${version} process`)
    expect(instructions).toContain('Budgets: 7 s of CPU time, 1000 bytes of printed output, 500 bytes of returned value')
    // A mode is advertised here (the helper's layers hold): each call runs under its own policy,
    // so the text says what every mode allows, not only the default (ptc-file-policy checks each).
    expect(ctx.ptcRuntime.sandboxMode).toBe('read-only')
    expect(instructions).toContain("what it may do with files follows the call's sandbox policy: under `read-only` it can read the workspace")
    expect(instructions).toContain('under `workspace-write` it can also write the workspace, and under `danger-full-access` it can also use the network')
    await python.dispose()
  })
})
