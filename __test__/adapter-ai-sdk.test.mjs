// code-runtime-native/ai-sdk inside the Vercel AI SDK: `generateText` of ai 7.0.173 with a model
// from the SDK's own test utilities (`ai/test`, standing in for the LLM) that calls the code tool;
// the SDK executes it as it executes any tool, and every assertion is on what `generateText`
// returns: the step's tool-result or tool-error, and the tool output the model receives next.
//
// ai 7 declares Node >= 22; the paths tested here also run on Node 20, so this suite runs in full
// on every Node CI uses, and fails unless every test ran.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { Context } from 'cordis'
import { generateText, jsonSchema, tool } from 'ai'
import { z } from 'zod'
import { PythonPtcRuntime } from 'code-runtime-native'
import { CodeRunError, codeRuntimeTool } from 'code-runtime-native/ai-sdk'
import { COMPUTE_MS, ledger, recorder, scriptedModel } from './adapter-helpers.mjs'
import { codeTools } from './ai-sdk-helpers.mjs'
import { PYTHON } from './python-helpers.mjs'

const TESTS = {
  node: 'the Node this runs on, and the engines the AI SDK declares',
  tools: 'two tools in sequence and two in parallel, with the SDK tool-call options, and an object back',
  failing: 'a failing tool is a ToolCallError the program catches',
  console: 'console output comes back in order',
  syntax: 'a syntax error is a tool-error of kind exception',
  budget: 'a compute-budget overrun is a tool-error of kind timeout',
  abort: "the tool call's abortSignal (generateText's tool timeout) ends a running program",
  names: 'hostile tool names, tools needing approval (offered) and tools without execute (not)',
  json: 'tool inputs and values JSON cannot carry exactly are errors the program catches',
  python: 'a Python runtime runs the model’s Python against the same tools',
}
const suite = ledger(Object.values(TESTS))
const codeTool = codeTools(suite)

/**
 * One `generateText` call in which the model runs `code` with the `code` tool, then answers.
 * Returns the first step's tool outcome (`tool-result` or `tool-error`), the output the model
 * saw next, the tools the model was offered, and the result.
 */
async function generate(tools, code, options = {}) {
  const { model, calls } = scriptedModel('code', { code })
  const result = await generateText({ model, tools, prompt: 'Run it.', stopWhen: ({ steps: done }) => done.length === 2, ...options })
  const outcome = result.steps[0].content.find((part) => part.type === 'tool-result' || part.type === 'tool-error')
  const toModel = calls[1]?.prompt.at(-1)?.content?.[0]?.output
  return { outcome, toModel, offered: calls[0].tools, result }
}

describe('the AI SDK with codeRuntimeTool', () => {
  it(TESTS.node, () => {
    const require = createRequire(import.meta.url)
    expect(require('ai/package.json').engines).toEqual({ node: '>=22' })
    suite.ran(TESTS.node)
  })

  it(TESTS.tools, async () => {
    const rec = recorder()
    const seen = []
    const double = tool({
      description: 'Doubles n.',
      inputSchema: z.object({ n: z.number() }),
      execute: ({ n }, options) => {
        seen.push([options.toolCallId, options.messages.length, options.abortSignal instanceof AbortSignal])
        return rec.track('double', { n }, n * 2)
      },
    })
    const square = tool({ description: 'Squares n.', inputSchema: z.object({ n: z.number() }), execute: ({ n }) => rec.track('square', { n }, n * n) })
    const code = codeTool({ tools: { double, square } })
    const { outcome, toModel, offered } = await generate({ code }, `
      const a: number = await tools.double({ n: 3 })
      const b: number = await tools.square({ n: a })
      const [c, d] = await Promise.all([tools.double({ n: 10 }), tools.square({ n: 4 })])
      return { a, b, c, d, nested: { list: [a, b], ok: true } }`, { abortSignal: new AbortController().signal })
    const expected = { logs: [], value: { a: 6, b: 36, c: 20, d: 16, nested: { list: [6, 36], ok: true } } }
    expect(outcome).toMatchObject({ type: 'tool-result', toolName: 'code', output: expected })
    expect(toModel).toEqual({ type: 'json', value: expected })
    expect(rec.calls).toEqual([['double', { n: 3 }], ['square', { n: 6 }], ['double', { n: 10 }], ['square', { n: 4 }]])
    expect(rec.mostAtOnce()).toBe(2)
    expect(seen).toEqual([['call-1/double/1', 1, true], ['call-1/double/3', 1, true]])
    // The model was offered the code tool, described with each tool's input schema.
    expect(offered.map((t) => t.name)).toEqual(['code'])
    expect(offered[0].description).toContain('- tools["double"](input): Doubles n. Input (JSON Schema): {"$schema"')
    suite.ran(TESTS.tools)
  })

  it(TESTS.failing, async () => {
    const lookup = tool({
      description: 'Fails.',
      inputSchema: z.object({ key: z.string() }),
      execute: async ({ key }) => {
        throw new Error(`no entry for ${key}`)
      },
    })
    const text = tool({ description: 'Throws a string.', inputSchema: z.object({}), execute: async () => { throw 'a plain string' } })
    const code = codeTool({ tools: { lookup, text } })
    const { outcome } = await generate({ code }, `
      const seen = []
      try { await tools.lookup({ key: 'x' }) } catch (e) { seen.push([e instanceof ToolCallError, e.toolName, e.message]) }
      try { await tools.text({}) } catch (e) { seen.push([e instanceof ToolCallError, e.toolName, e.message]) }
      try { await tools.lookup({ key: 42 }) } catch (e) { seen.push([e.toolName, e.message.split(':')[0]]) }
      return seen`)
    expect(outcome.output).toEqual({
      logs: [],
      value: [[true, 'lookup', 'no entry for x'], [true, 'text', 'a plain string'], ['lookup', 'Invalid input for tool "lookup"']],
    })
    suite.ran(TESTS.failing)
  })

  it(TESTS.console, async () => {
    const code = codeTool({ tools: {} })
    const { outcome } = await generate({ code }, "console.log('plain', { a: 1 })\nconsole.warn('%s items', 3)\nconsole.error('bad')")
    expect(outcome.output).toEqual({ logs: ['plain { a: 1 }', '3 items', 'bad'] })
    suite.ran(TESTS.console)
  })

  it(TESTS.syntax, async () => {
    const code = codeTool({ tools: {} })
    const { outcome, toModel } = await generate({ code }, "console.log('never')\nlet a = 1\nlet a = 2")
    expect(outcome.type).toBe('tool-error')
    expect(outcome.error).toBeInstanceOf(CodeRunError)
    expect(outcome.error.kind).toBe('exception')
    expect(outcome.error.message).toBe("code run failed (exception): SyntaxError: Identifier 'a' has already been declared\n    at program.ts:3:5")
    expect(toModel).toEqual({ type: 'error-text', value: `CodeRunError: ${outcome.error.message}` })
    suite.ran(TESTS.syntax)
  })

  it(TESTS.budget, async () => {
    const code = codeTool({ tools: {} })
    const { outcome } = await generate({ code }, "console.log('spinning')\nwhile (true) {}")
    expect(outcome.type).toBe('tool-error')
    expect({ name: outcome.error.name, kind: outcome.error.kind, logs: outcome.error.logs }).toEqual({ name: 'CodeRunError', kind: 'timeout', logs: ['spinning'] })
    expect(outcome.error.message).toBe(`code run failed (timeout): compute budget exhausted (${COMPUTE_MS}ms busy) at program.ts:2:1\n\nConsole output:\nspinning`)
    suite.ran(TESTS.budget)
  })

  it(TESTS.abort, async () => {
    const code = codeTool({ tools: {} })
    const started = Date.now()
    const { outcome, result } = await generate({ code }, "console.log('waiting')\nawait new Promise((r) => setTimeout(r, 20000))", {
      timeout: { toolMs: 300 },
    })
    expect(Date.now() - started).toBeLessThan(5000)
    expect(outcome.type).toBe('tool-error')
    expect(outcome.error.kind).toBe('abort')
    expect(outcome.error.message).toBe('code run failed (abort): TimeoutError: The operation was aborted due to timeout\n\nConsole output:\nwaiting')
    // The SDK went on to the model's next step with the failure.
    expect(result.text).toBe('done')
    // A timeoutMs of its own ends it as the runtime's timeout.
    const bounded = codeTool({ tools: {}, timeoutMs: 300 })
    const own = await generate({ code: bounded }, 'await new Promise((r) => setTimeout(r, 20000))')
    expect([own.outcome.error.kind, own.outcome.error.message]).toEqual(['timeout', 'code run failed (timeout): execution deadline reached (300ms)'])
    suite.ran(TESTS.abort)
  })

  it(TESTS.names, async () => {
    const named = (name) => tool({ description: `Tool ${name}.`, inputSchema: z.object({}), execute: async () => name })
    const tools = { 'get-weather': named('get-weather'), then: named('then'), constructor: named('constructor') }
    Object.defineProperty(tools, '__proto__', { value: named('__proto__'), enumerable: true })
    tools.approve = tool({ description: 'Needs approval.', inputSchema: z.object({}), needsApproval: true, execute: async () => 'approved' })
    tools.client = tool({ description: 'Runs on the client.', inputSchema: z.object({}) })
    const code = codeTool({ tools })
    const { outcome, offered } = await generate({ code }, `
      const out = [await tools['get-weather']({}), await tools.then({}), await tools.constructor({}), await tools.__proto__({})]
      out.push(typeof tools.approve, typeof tools.client, Object.keys(tools).sort())
      return out`)
    // A tool that needs approval is offered (the program pauses at its calls: adapter-ai-sdk-approval.test.mjs).
    expect(outcome.output).toEqual({
      logs: [],
      value: ['get-weather', 'then', 'constructor', '__proto__', 'function', 'undefined', ['__proto__', 'approve', 'constructor', 'get-weather', 'then']],
    })
    expect(offered[0].description).toContain('- tools["approve"](input): (needs approval) Needs approval.')
    expect(offered[0].description).not.toContain('client')
    suite.ran(TESTS.names)
  })

  it(TESTS.json, async () => {
    const echo = tool({ description: 'Echoes.', inputSchema: jsonSchema({}), execute: async (input) => input })
    const when = tool({ description: 'A Date.', inputSchema: z.object({}), execute: async () => new Date(0) })
    const code = codeTool({ tools: { echo, when } })
    const { outcome } = await generate({ code }, `
      const out = []
      try { await tools.echo({ at: new Date(0) }) } catch (e) { out.push([e.name, e.message]) }
      try { await tools.echo({ n: NaN }) } catch (e) { out.push([e.name, e.message]) }
      try { await tools.when({}) } catch (e) { out.push([e.name, e.toolName, e.message]) }
      return out`)
    expect(outcome.output).toEqual({
      logs: [],
      value: [
        ['ToolCallError', 'binding arguments must be lossless JSON'],
        ['ToolCallError', 'binding arguments must be lossless JSON'],
        ['ToolCallError', 'when', 'binding resolution must be lossless JSON'],
      ],
    })
    suite.ran(TESTS.json)
  })

  it(TESTS.python, async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(PythonPtcRuntime, { pythonBin: PYTHON, cpuSeconds: 5 })
    try {
      const double = tool({ description: 'Doubles n.', inputSchema: z.object({ n: z.number() }), execute: async ({ n }) => n * 2 })
      const lookup = tool({ description: 'Fails.', inputSchema: z.object({}), execute: async () => { throw new Error('no entry') } })
      const code = codeRuntimeTool({ runtime: ctx.ptcRuntime, tools: { double, lookup } })
      const { outcome, offered } = await generate({ code }, `import asyncio
a, b = await asyncio.gather(tools.double({"n": 2}), tools.double({"n": 3}))
try:
    await tools.lookup({})
except ToolCallError as e:
    print(e.toolName, str(e))
return {"sum": a + b}`)
      expect(offered[0].description).toMatch(/^Run one Python program/)
      if (outcome.type === 'tool-error') throw outcome.error
      expect(outcome.output).toEqual({ logs: ['lookup no entry'], value: { sum: 10 } })
    } finally {
      await fiber.dispose()
    }
    suite.ran(TESTS.python)
  })
})
