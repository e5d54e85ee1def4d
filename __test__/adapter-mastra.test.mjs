// code-runtime-native/mastra inside a Mastra agent: @mastra/core 1.71.0's `createCodeMode` builds
// its `execute_typescript` tool on this transport, a Mastra `Agent` runs it when a model from the
// AI SDK's test utilities (`ai/test` of ai 7.0.173, standing in for the LLM) calls the tool, and
// every assertion is on what the agent hands back: its tool results, and the tool result the
// model receives on its next step.
//
// @mastra/core declares Node >= 22.13; the paths tested here also run on Node 20, so this suite
// runs in full on every Node CI uses, and fails unless every test ran.
import { createRequire } from 'node:module'
import { afterAll, describe, expect, it } from 'vitest'
import { Agent } from '@mastra/core/agent'
import { createCodeMode, createCodeModeTool, createTool } from '@mastra/core/tools'
import { z } from 'zod'
import { CodeRuntimeTransport } from 'code-runtime-native/mastra'
import { COMPUTE_MS, ledger, recorder, scriptedModel } from './adapter-helpers.mjs'

const TESTS = {
  node: 'the Node this runs on, and the engines Mastra declares',
  tools: 'two tools in sequence and two in parallel, and an object back',
  failing: 'a failing tool is an Error with its name that the program catches',
  console: 'console output comes back in order',
  syntax: 'a syntax error comes back with its name and line',
  thrown: 'a thrown error comes back with its name, line and the logs before it',
  budget: 'the compute budget and the Code Mode timeout end a program as TimeoutError',
  abort: "the agent's abortSignal ends a running program as AbortError",
  names: "tool ids are sanitised by Mastra's own rule, and a collision is a tool error the model sees",
  json: 'tool inputs and values JSON cannot carry exactly are errors the program catches',
}
const suite = ledger(Object.values(TESTS))
const transport = new CodeRuntimeTransport({ config: { computeMs: COMPUTE_MS } })
afterAll(async () => {
  await transport.dispose()
  suite.check()
})


/**
 * One agent turn in which the model runs `code` through Code Mode over `tools`. Returns the
 * tool's result as the agent reports it, the tool result the model saw next, the instructions
 * and the agent's finish reason.
 */
async function turn(tools, code, { timeout, abortSignal, codeModeTool } = {}) {
  const { tool, instructions } = codeModeTool
    ? { tool: createCodeModeTool({ tools, timeout }, transport), instructions: '' }
    : createCodeMode({ tools, timeout }, transport)
  const { model, prompts } = scriptedModel('execute_typescript', { code })
  const agent = new Agent({ id: 'coder', name: 'coder', instructions: ['You write code.', instructions], model, tools: { execute_typescript: tool } })
  const output = await agent.generate('Run it.', { abortSignal })
  const toModel = prompts[1]?.at(-1)?.content?.[0]?.output
  return { result: output.toolResults[0]?.payload.result, toModel, instructions, finishReason: output.finishReason }
}

const noop = createTool({ id: 'noop', description: 'Does nothing.', inputSchema: z.object({}), execute: async () => null })

describe('Mastra Code Mode with the code-runtime-native transport', () => {
  it(TESTS.node, () => {
    const require = createRequire(import.meta.url)
    expect(require('@mastra/core/package.json').engines).toEqual({ node: '>=22.13.0' })
    expect(transport.requiresSandbox).toBe(false)
    suite.ran(TESTS.node)
  })

  it(TESTS.tools, async () => {
    const rec = recorder()
    const double = createTool({ id: 'double', description: 'Doubles n.', inputSchema: z.object({ n: z.number() }), execute: ({ n }) => rec.track('double', { n }, n * 2) })
    const square = createTool({ id: 'square', description: 'Squares n.', inputSchema: z.object({ n: z.number() }), execute: ({ n }) => rec.track('square', { n }, n * n) })
    const { result, toModel, instructions } = await turn({ double, square }, `
      const a: number = await external_double({ n: 3 })
      const b: number = await external_square({ n: a })
      const [c, d] = await Promise.all([external_double({ n: 10 }), external_square({ n: 4 })])
      return { a, b, c, d, nested: { list: [a, b], ok: true } }`)
    expect(instructions).toContain('declare function external_double(input: { n: number }): Promise<unknown>;')
    const expected = { success: true, result: { a: 6, b: 36, c: 20, d: 16, nested: { list: [6, 36], ok: true } }, logs: [] }
    expect(result).toEqual(expected)
    expect(toModel).toEqual({ type: 'json', value: expected })
    expect(rec.calls).toEqual([['double', { n: 3 }], ['square', { n: 6 }], ['double', { n: 10 }], ['square', { n: 4 }]])
    expect(rec.mostAtOnce()).toBe(2)
    suite.ran(TESTS.tools)
  })

  it(TESTS.failing, async () => {
    const lookup = createTool({
      id: 'lookup',
      description: 'Fails.',
      inputSchema: z.object({ key: z.string() }),
      execute: async ({ key }) => {
        const error = new Error(`no entry for ${key}`)
        error.name = 'LookupError'
        throw error
      },
    })
    const text = createTool({ id: 'text', description: 'Throws a string.', inputSchema: z.object({}), execute: async () => { throw 'a plain string' } })
    const { result } = await turn({ lookup, text }, `
      const seen = []
      try { await external_lookup({ key: 'x' }) } catch (e) { seen.push([e instanceof Error, e.name, e.message]) }
      try { await external_text({}) } catch (e) { seen.push([e instanceof Error, e.name, e.message]) }
      try { await external_lookup({ key: 42 }) } catch (e) { seen.push([e.name, e.message.split('\\n')[0]]) }
      return seen`)
    expect(result.success).toBe(true)
    expect(result.result.slice(0, 2)).toEqual([[true, 'LookupError', 'no entry for x'], [true, 'Error', 'a plain string']])
    // Mastra validated the input before the tool ran, and its refusal reached the program.
    expect(result.result[2][0]).toBe('Error')
    expect(result.result[2][1]).toMatch(/^Tool input validation failed for lookup/)
    suite.ran(TESTS.failing)
  })

  it(TESTS.console, async () => {
    const { result } = await turn({ noop }, "console.log('plain', { a: 1 })\nconsole.info('%s items', 3)\nconsole.warn('careful')\nconsole.error('bad')")
    expect(result).toEqual({ success: true, logs: ['plain { a: 1 }', '3 items', 'careful', 'bad'] })
    suite.ran(TESTS.console)
  })

  it(TESTS.syntax, async () => {
    const { result, toModel } = await turn({ noop }, 'const ok: number = 1\nlet a = 1\nlet a = 2')
    const expected = { success: false, error: { name: 'SyntaxError', message: "Identifier 'a' has already been declared", line: 3 }, logs: [] }
    expect(result).toEqual(expected)
    expect(toModel).toEqual({ type: 'json', value: expected })
    suite.ran(TESTS.syntax)
  })

  it(TESTS.thrown, async () => {
    const { result } = await turn({ noop }, "console.log('before')\n\nthrow new RangeError('out of range')")
    expect(result).toEqual({ success: false, error: { name: 'RangeError', message: 'out of range', line: 3 }, logs: ['before'] })
    const plain = await turn({ noop }, "throw 'a plain string'")
    expect(plain.result).toEqual({ success: false, error: { message: 'a plain string' }, logs: [] })
    suite.ran(TESTS.thrown)
  })

  it(TESTS.budget, async () => {
    const spinning = await turn({ noop }, 'while (true) {}')
    expect(spinning.result).toEqual({
      success: false,
      error: { name: 'TimeoutError', message: `compute budget exhausted (${COMPUTE_MS}ms busy) at program.ts:1:990` },
      logs: [],
    })
    const waiting = await turn({ noop }, "console.log('waiting')\nawait new Promise((r) => setTimeout(r, 10000))", { timeout: 400 })
    expect(waiting.result).toEqual({ success: false, error: { name: 'TimeoutError', message: 'execution deadline reached (400ms)' }, logs: ['waiting'] })
    suite.ran(TESTS.budget)
  })

  it(TESTS.abort, async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('the user left')), 300)
    const started = Date.now()
    const { result, finishReason } = await turn({ noop }, "console.log('waiting')\nawait new Promise((r) => setTimeout(r, 20000))", {
      abortSignal: controller.signal,
    })
    expect(Date.now() - started).toBeLessThan(5000)
    expect(finishReason).toBe('aborted')
    expect(result).toEqual({ success: false, error: { name: 'AbortError', message: 'Error: the user left' }, logs: ['waiting'] })
    suite.ran(TESTS.abort)
  })

  it(TESTS.names, async () => {
    const ids = ['get-weather', '1st tool', 'ünïcode', '$cash', 'class', '__proto__']
    const tools = Object.fromEntries(
      ids.map((id) => [id, createTool({ id, description: `Tool ${id}.`, inputSchema: z.object({}), execute: async () => id })]),
    )
    const declared = (instructions) => [...instructions.matchAll(/^declare function (external_\S+)\(/gm)].map((m) => m[1])
    const { instructions } = createCodeMode({ tools }, transport)
    const names = declared(instructions)
    expect(names).toEqual(['external_get_weather', 'external__1st_tool', 'external__n_code', 'external_$cash', 'external_class', 'external___proto__'])
    const { result } = await turn(tools, `return [${names.map((name) => `await globalThis[${JSON.stringify(name)}]({})`).join(', ')}]`)
    expect(result).toEqual({ success: true, result: ids, logs: [] })
    // createCodeModeTool alone does not check collisions: the transport refuses them, and the
    // model sees why.
    const dashed = createTool({ id: 'a-b', description: 'x', inputSchema: z.object({}), execute: async () => 1 })
    const underscored = createTool({ id: 'a_b', description: 'x', inputSchema: z.object({}), execute: async () => 2 })
    const collision = await turn({ dashed, underscored }, 'return 1', { codeModeTool: true })
    expect(collision.result).toBeUndefined()
    expect(collision.toModel).toEqual({
      type: 'error-text',
      value: 'code-runtime-native: Code Mode tool ids "a-b" and "a_b" both map to external_a_b: give one of the tools another id',
    })
    suite.ran(TESTS.names)
  })

  it(TESTS.json, async () => {
    const echo = createTool({ id: 'echo', description: 'Echoes.', inputSchema: z.any(), execute: async (input) => input })
    const when = createTool({ id: 'when', description: 'A Date.', inputSchema: z.object({}), execute: async () => new Date(0) })
    const { result } = await turn({ echo, when }, `
      const out = []
      try { await external_echo({ at: new Date(0) }) } catch (e) { out.push(e.message) }
      try { await external_echo({ n: NaN }) } catch (e) { out.push(e.message) }
      try { await external_when({}) } catch (e) { out.push(e.message) }
      return out`)
    expect(result).toEqual({
      success: true,
      result: [
        'binding arguments must be lossless JSON',
        'binding arguments must be lossless JSON',
        'tool "when" returned a value JSON cannot carry exactly (undefined inside, a function, a Date, NaN, a class instance, a cycle, ...): make the tool return plain JSON data',
      ],
      logs: [],
    })
    suite.ran(TESTS.json)
  })
})
