// code-runtime-native/cloudflare inside Cloudflare's Code Mode: @cloudflare/codemode 0.5.6's own
// code tools (`createCodeTool` of its `/tanstack-ai` entry with TanStack AI 0.39.0 tools, and
// `createBrowserCodeTool` of `/browser`, the two entry points that load on Node) normalise the
// model's code, resolve the providers and hand them to this executor; what they return or throw
// is what the chat receives, and that is what is asserted.
import { afterAll, describe, expect, it } from 'vitest'
import { toolDefinition } from '@tanstack/ai'
import { createBrowserCodeTool } from '@cloudflare/codemode/browser'
import { createCodeTool, tanstackTools } from '@cloudflare/codemode/tanstack-ai'
import { z } from 'zod'
import { CodeRuntimeExecutor, sanitizeToolName } from 'code-runtime-native/cloudflare'
import { COMPUTE_MS, recorder } from './adapter-helpers.mjs'

const executor = new CodeRuntimeExecutor({ timeout: 5000, config: { computeMs: COMPUTE_MS } })
afterAll(() => executor.dispose())

function serverTool(name, execute, inputSchema = z.looseObject({})) {
  return toolDefinition({ name, description: `The ${name} tool.`, inputSchema }).server(execute)
}

/** Cloudflare's TanStack code tool over providers, run as the chat runs it. */
function codeTool(tools, options = {}) {
  const tool = createCodeTool({ tools, executor: options.executor ?? executor })
  return { description: tool.description, run: (code) => tool.execute({ code }) }
}

describe("Cloudflare Code Mode's code tools with the code-runtime-native executor", () => {
  it('runs two tools in sequence and two in parallel across two namespaces, and returns an object', async () => {
    const rec = recorder()
    const math = tanstackTools([
      serverTool('twice', ({ n }) => rec.track('twice', { n }, n * 2), z.object({ n: z.number() })),
      serverTool('square', ({ n }) => rec.track('square', { n }, n * n), z.object({ n: z.number() })),
    ])
    const text = tanstackTools([serverTool('upper', ({ s }) => rec.track('upper', { s }, s.toUpperCase()), z.object({ s: z.string() }))], 'text')
    const { run, description } = codeTool([math, text])
    expect(description).toContain('declare const codemode')
    expect(description).toContain('declare const text')
    const result = await run(`async () => {
      const a = await codemode.twice({ n: 3 })
      const b = await codemode.square({ n: a })
      const [c, d] = await Promise.all([codemode.twice({ n: 10 }), text.upper({ s: 'hi' })])
      return { a, b, c, d, nested: { list: [a, b], ok: true } }
    }`)
    expect(result).toEqual({ result: { a: 6, b: 36, c: 20, d: 'HI', nested: { list: [6, 36], ok: true } } })
    expect(rec.calls).toEqual([['twice', { n: 3 }], ['square', { n: 6 }], ['twice', { n: 10 }], ['upper', { s: 'hi' }]])
    expect(rec.mostAtOnce()).toBe(2)
  })

  it('turns a failing tool into an Error the program catches, whatever the tool threw', async () => {
    const thrown = { error: new TypeError('no entry for x'), text: 'a plain string', nothing: null, object: { message: 'an object message' } }
    const tools = Object.entries(thrown).map(([name, value]) =>
      serverTool(`fail_${name}`, () => {
        throw value
      }),
    )
    const { run } = codeTool([tanstackTools(tools)])
    const result = await run(`async () => {
      const seen = []
      for (const name of ['error', 'text', 'nothing', 'object']) {
        try { await codemode['fail_' + name]({}) } catch (e) { seen.push([e instanceof Error, e.message]) }
      }
      try { await codemode.missing({}) } catch (e) { seen.push(e.message) }
      return seen
    }`)
    expect(result).toEqual({
      result: [[true, 'no entry for x'], [true, 'a plain string'], [true, 'null'], [true, 'an object message'], 'Tool "missing" not found'],
    })
  })

  it('returns console output with the [warn] / [error] prefixes of its executors', async () => {
    const { run } = codeTool([tanstackTools([serverTool('noop', () => null)])])
    const result = await run(`async () => {
      console.log('plain', { a: 1 })
      console.info('info')
      console.warn('%s items', 3)
      console.error({ e: true })
      return 'done'
    }`)
    expect(result).toEqual({ result: 'done', logs: ['plain { a: 1 }', 'info', '[warn] 3 items', '[error] { e: true }'] })
  })

  it("reports a syntax error, a thrown error and a budget overrun as the framework's failure, logs included", async () => {
    const { run } = codeTool([tanstackTools([serverTool('noop', () => null)])])
    // The framework's normalizeCode cannot parse this one either, so it wraps it in one more
    // arrow function (a line above it): the position is in the code the executor was given.
    await expect(run('async () => {\n  let a = 1\n  let a = 2\n}')).rejects.toThrow(
      "Code execution failed: SyntaxError: Identifier 'a' has already been declared\n    at program.ts:4:7",
    )
    const thrown = await run("async () => {\n  console.log('before')\n  throw new RangeError('out of range')\n}").catch((e) => e)
    expect(thrown.message).toBe(
      'Code execution failed: RangeError: out of range\n    at program.ts:3:9\n\nConsole output:\nbefore',
    )
    // The framework's message carries where the budget stopped the program
    // (docs/tracing.md#the-timeouts-clause).
    const spun = await run('async () => { while (true) {} }').catch((e) => e)
    expect(spun.message).toMatch(new RegExp(`^Code execution failed: TimeoutError: compute budget exhausted \\(${COMPUTE_MS}ms busy\\) at program\\.ts:\\d+:\\d+$`))
  })

  it('passes several arguments to one tool and keeps a provider prelude', async () => {
    const fns = { join: async (...args) => JSON.stringify(args) }
    Object.defineProperty(fns, '__proto__', { value: async () => 'an own __proto__ tool', enumerable: true })
    const result = await executor.execute(
      'async () => [await state.join("a", 2, { b: true }), await state.local(3), await state.__proto__()]',
      [{ name: 'state', fns, prelude: 'state.local = async (n) => n * 10' }],
    )
    expect(result).toEqual({ result: ['["a",2,{"b":true}]', 30, 'an own __proto__ tool'], logs: [] })
  })

  it('ends a program at its timeout and when its signal aborts, never throwing', async () => {
    const timed = new CodeRuntimeExecutor({ timeout: 300, config: { computeMs: COMPUTE_MS } })
    const controller = new AbortController()
    const aborted = new CodeRuntimeExecutor({ signal: controller.signal, config: { computeMs: COMPUTE_MS } })
    try {
      const wait = 'async () => { console.log("waiting"); await new Promise((r) => setTimeout(r, 10000)) }'
      expect(await timed.execute(wait, [])).toEqual({
        result: undefined,
        error: 'TimeoutError: execution deadline reached (300ms)',
        logs: ['waiting'],
      })
      const running = aborted.execute(wait, [])
      setTimeout(() => controller.abort('the user stopped it'), 100)
      expect(await running).toEqual({ result: undefined, error: 'AbortError: the user stopped it', logs: ['waiting'] })
      expect(await aborted.execute('async () => 1', [])).toEqual({ result: undefined, error: 'AbortError: the user stopped it', logs: [] })
    } finally {
      await timed.dispose()
      await aborted.dispose()
    }
  })

  it('refuses tool inputs and tool values JSON cannot carry exactly, as errors the program catches', async () => {
    const result = await executor.execute(
      `async () => {
        const out = []
        try { await codemode.echo(new Date(0)) } catch (e) { out.push(e.message) }
        try { await codemode.echo(1, undefined, 2) } catch (e) { out.push(e.message) }
        try { await codemode.when() } catch (e) { out.push(e.message) }
        out.push(await codemode.echo(1, undefined))
        return out
      }`,
      [{ name: 'codemode', fns: { echo: async (...args) => args, when: async () => new Map() } }],
    )
    expect(result).toEqual({
      result: [
        'binding arguments must be lossless JSON',
        'binding arguments must be lossless JSON',
        'tool "when" returned a value JSON cannot carry exactly (undefined inside, a function, a Date, NaN, a class instance, a cycle, ...): make the tool return plain JSON data',
        [1],
      ],
      logs: [],
    })
  })
})

describe('names', () => {
  // Not `__proto__`: createBrowserCodeTool copies tools by assignment, which drops it.
  const hostile = ['get-weather', 'my.tool', 'has space', '1st', 'class', 'double', 'undefined', 'ünïcode', '$cash', 'a+b', '', 'then']

  it("sanitises tool names exactly as Cloudflare's type generator does, and programs call them by those names", async () => {
    const tools = Object.fromEntries(
      hostile.map((name) => [name, { description: `tool ${JSON.stringify(name)}`, inputSchema: { type: 'object' }, execute: async () => name }]),
    )
    const browser = createBrowserCodeTool({ tools, executor })
    const declared = [...browser.description.matchAll(/^\t(\S+): \(input: /gm)].map((m) => m[1])
    expect(declared).toEqual(hostile.map(sanitizeToolName))
    expect(declared).toEqual(['get_weather', 'my_tool', 'has_space', '_1st', 'class_', 'double_', 'undefined_', 'ncode', '$cash', 'ab', '_', 'then'])
    const calls = declared.map((name) => `await codemode[${JSON.stringify(name)}]()`).join(', ')
    expect(await browser.execute({ code: `async () => [${calls}]` })).toEqual({ result: hostile })
  })

  it('reports names that collide after sanitising, and provider names it cannot use, as error strings', async () => {
    const { run } = codeTool([tanstackTools([serverTool('get-weather', () => 1), serverTool('get_weather', () => 2)])])
    await expect(run('async () => 1')).rejects.toThrow(
      'Code execution failed: Tool names "get-weather" and "get_weather" both sanitize to "get_weather" in provider "codemode"',
    )
    const fns = { f: async () => 1 }
    const cases = [
      [[{ name: 'class', fns }], 'Provider name "class" is not a valid JavaScript identifier'],
      [[{ name: 'a-b', fns }], 'Provider name "a-b" is not a valid JavaScript identifier'],
      [[{ name: 'console', fns }], 'Provider name "console" is reserved'],
      [[{ name: '__codeRuntimeBridge', fns }], 'Provider name "__codeRuntimeBridge" is reserved'],
      [[{ name: 'x', fns }, { name: 'x', fns }], 'Duplicate provider name "x"'],
    ]
    for (const [providers, error] of cases) expect(await executor.execute('async () => 1', providers)).toEqual({ result: undefined, error, logs: [] })
    expect(await executor.execute('async () => 1', [], { connectors: [{ name: 'gh', binding: { callTool: async () => 1 } }] })).toEqual({
      result: undefined,
      error: 'connectors are Workers RPC bindings, which this executor cannot call outside Cloudflare Workers: pass their tools as a provider ({ name, fns }) instead',
      logs: [],
    })
  })
})
