// code-runtime-native/tanstack inside TanStack AI Code Mode: @tanstack/ai-code-mode 0.3.4 (with
// @tanstack/ai 0.39.0) builds its `execute_typescript` tool on this driver, strips the model's
// TypeScript with its own sucrase step, and maps the driver's results, logs and errors into what
// the chat receives. Every assertion is on that tool's result (and the custom events the
// framework emits from it), or on the driver contract the framework calls.
import { afterAll, describe, expect, it } from 'vitest'
import { toolDefinition } from '@tanstack/ai'
import { createCodeMode } from '@tanstack/ai-code-mode'
import { z } from 'zod'
import { createCodeRuntimeDriver } from 'code-runtime-native/tanstack'
import { COMPUTE_MS, recorder } from './adapter-helpers.mjs'

const driver = createCodeRuntimeDriver({ config: { computeMs: COMPUTE_MS } })
afterAll(() => driver.dispose())

/** The framework's tool over `tools`, and a caller that records the custom events it emits. */
function codeMode(tools, options = {}) {
  const { tool, systemPrompt } = createCodeMode({ driver, tools, timeout: 5000, ...options })
  const events = []
  const execute = (typescriptCode) =>
    tool.execute({ typescriptCode }, { emitCustomEvent: (name, data) => events.push({ name, ...data }) })
  return { execute, events, systemPrompt }
}

function serverTool(name, execute, inputSchema = z.looseObject({})) {
  return toolDefinition({ name, description: `The ${name} tool.`, inputSchema }).server(execute)
}

describe('TanStack AI Code Mode with the code-runtime-native driver', () => {
  it('runs two tools in sequence and two in parallel, and returns an object', async () => {
    const rec = recorder()
    const double = serverTool('double', ({ n }) => rec.track('double', { n }, n * 2), z.object({ n: z.number() }))
    const square = serverTool('square', ({ n }) => rec.track('square', { n }, n * n), z.object({ n: z.number() }))
    const { execute, systemPrompt } = codeMode([double, square])
    expect(systemPrompt).toContain('external_double')
    const result = await execute(`
      const a: number = await external_double({ n: 3 })
      const b: number = await external_square({ n: a })
      const [c, d] = await Promise.all([external_double({ n: 10 }), external_square({ n: 4 })])
      return { a, b, c, d, nested: { list: [a, b], ok: true } }`)
    expect(result).toEqual({ success: true, result: { a: 6, b: 36, c: 20, d: 16, nested: { list: [6, 36], ok: true } }, logs: [] })
    expect(rec.calls).toEqual([['double', { n: 3 }], ['square', { n: 6 }], ['double', { n: 10 }], ['square', { n: 4 }]])
    expect(rec.mostAtOnce()).toBe(2)
  })

  it('turns a failing tool into an Error the program catches, whatever the tool threw', async () => {
    const thrown = { error: new Error('no entry for x'), text: 'a plain string', nothing: null, object: { message: 'an object message' } }
    const tools = Object.entries(thrown).map(([name, value]) =>
      serverTool(`fail_${name}`, () => {
        throw value
      }),
    )
    const { execute, events } = codeMode(tools)
    const result = await execute(`
      const seen = []
      for (const name of ['error', 'text', 'nothing', 'object']) {
        try { await globalThis['external_fail_' + name]({}) } catch (e) { seen.push([e instanceof Error, e.message]) }
      }
      return seen`)
    expect(result).toEqual({
      success: true,
      result: [[true, 'no entry for x'], [true, 'a plain string'], [true, 'null'], [true, 'an object message']],
      logs: [],
    })
    // The framework saw each failure as its own external_error event.
    expect(events.filter((e) => e.name === 'code_mode:external_error').map((e) => e.function)).toEqual(
      tools.map((t) => `external_${t.name}`),
    )
  })

  it("prints console output with the level prefixes the framework parses into its console events", async () => {
    const { execute, events } = codeMode([serverTool('noop', () => null)])
    const result = await execute(`
      console.log('plain', { a: 1 })
      console.info('%s items', 3)
      console.warn({ w: true })
      console.error('bad', new Error('boom').message)
      console.error()`)
    expect(result).toEqual({ success: true, logs: ['plain { a: 1 }', 'INFO: 3 items', 'WARN: { w: true }', 'ERROR: bad boom', 'ERROR: '] })
    const levels = events.filter((e) => e.name === 'code_mode:console').map((e) => [e.level, e.message])
    expect(levels).toEqual([['log', 'plain { a: 1 }'], ['info', '3 items'], ['warn', '{ w: true }'], ['error', 'bad boom'], ['error', '']])
  })

  it('reports a syntax error V8 finds (sucrase passes it) with its name', async () => {
    const { execute } = codeMode([serverTool('noop', () => null)])
    const result = await execute("const ok = 1\nlet a = 1\nlet a = 2")
    expect(result).toEqual({
      success: false,
      error: { name: 'SyntaxError', message: "Identifier 'a' has already been declared" },
      logs: [],
    })
  })

  it('reports a thrown error with its name and the logs printed before it', async () => {
    const { execute } = codeMode([serverTool('noop', () => null)])
    const result = await execute("console.log('before')\nthrow new RangeError('out of range')")
    expect(result).toEqual({ success: false, error: { name: 'RangeError', message: 'out of range' }, logs: ['before'] })
  })

  it('ends a program at the compute budget and at the context timeout, each as a TimeoutError', async () => {
    const spinning = codeMode([serverTool('noop', () => null)])
    expect(await spinning.execute('while (true) {}')).toEqual({
      success: false,
      error: { name: 'TimeoutError', message: `compute budget exhausted (${COMPUTE_MS}ms busy) at program.ts:1:958` },
      logs: [],
    })
    const waiting = codeMode([serverTool('noop', () => null)], { timeout: 400 })
    expect(await waiting.execute("console.log('waiting')\nawait new Promise((r) => setTimeout(r, 10000))")).toEqual({
      success: false,
      error: { name: 'TimeoutError', message: 'execution deadline reached (400ms)' },
      logs: ['waiting'],
    })
  })

  it('caps the heap at the context memoryLimit', async () => {
    const { execute } = codeMode([serverTool('noop', () => null)], { memoryLimit: 16 })
    const result = await execute('const keep = []\nwhile (true) keep.push(new Array(100000).fill(keep.length))')
    expect(result.success).toBe(false)
    expect(result.error).toEqual({ name: 'WorkerExitError', message: 'isolate heap limit reached (16 MiB)' })
  })

  it('refuses a tool input or a tool value JSON cannot carry exactly, as errors the program catches', async () => {
    const { execute } = codeMode([serverTool('echo', (input) => input), serverTool('when', () => new Date(0))])
    const result = await execute(`
      const out = []
      try { await external_echo({ at: new Date(0) }) } catch (e) { out.push(e.message) }
      try { await external_echo({ n: NaN }) } catch (e) { out.push(e.message) }
      try { await external_when({}) } catch (e) { out.push(e.message) }
      out.push(await external_echo())
      return out`)
    expect(result).toEqual({
      success: true,
      result: [
        'binding arguments must be lossless JSON',
        'binding arguments must be lossless JSON',
        'tool "external_when" returned a value JSON cannot carry exactly (undefined inside, a function, a Date, NaN, a class instance, a cycle, ...): make the tool return plain JSON data',
        {},
      ],
      logs: [],
    })
  })

  it('refuses a tool whose binding a program could not call by name, and one that takes a runtime name', async () => {
    const dashed = codeMode([serverTool('get-weather', () => 1)])
    expect(await dashed.execute('return 1')).toEqual({
      success: false,
      error: {
        name: 'Error',
        message:
          'code-runtime-native: binding "external_get-weather" is not a JavaScript identifier, so a program cannot call it: ' +
          'give the tool a name of letters, digits, _ and $ (Code Mode exposes tool "x" as external_x)',
      },
    })
    const context = driver.createContext({ bindings: { console: { name: 'console', execute: async () => 1 } } })
    await expect(context).rejects.toThrow('code-runtime-native: binding "console" is a name the runtime binds in every program: rename the tool')
  })
})

describe('the driver contract TanStack calls', () => {
  it('dispose() of a context ends a program that is still running, and refuses later runs', async () => {
    const context = await driver.createContext({ bindings: {}, timeout: 60000 })
    const running = context.execute("console.log('spinning')\nwhile (true) {}")
    // Let the program start before disposing.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const started = Date.now()
    await context.dispose()
    const result = await running
    expect(Date.now() - started).toBeLessThan(1000)
    expect(result).toEqual({
      success: false,
      error: { name: 'AbortError', message: 'the Code Mode context was disposed while its program ran', code: 'abort' },
      logs: ['spinning'],
    })
    expect(await context.execute('return 1')).toEqual({
      success: false,
      error: { name: 'DisposedError', message: 'Context has been disposed' },
      logs: [],
    })
  })

  it("reports the failure kind as code, and stacks (thrown and printed) at the program's own positions", async () => {
    const context = await driver.createContext({ bindings: { external_fail: { name: 'external_fail', execute: async () => { throw new Error('nope') } } } })
    const result = await context.execute('try { await external_fail({}) } catch (e) { console.log(e.stack) }; console.trace(1)\nawait external_fail({})')
    await context.dispose()
    expect(result).toEqual({
      success: false,
      error: { name: 'Error', message: 'nope', code: 'exception', stack: 'Error: nope\n    at async program.ts:2:1' },
      logs: ['Error: nope\n    at async program.ts:1:7', 'Trace: 1\n    at program.ts:1:77'],
    })
  })
})
