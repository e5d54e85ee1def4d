// Tracing through the four framework adapters (docs/tracing.md): each framework runs a program
// that calls one of its tools, on a borrowed `ctx.ptcRuntime` whose config names a real
// OpenTelemetry tracer. What the host sees: `stats.calls` and the `execute_tool` span name the
// framework's own tool (not the adapters' hidden namespace), and the tool's own span nests under
// the call's, under the run's, under the caller's.
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { createCodeTool, tanstackTools } from '@cloudflare/codemode/tanstack-ai'
import { Agent } from '@mastra/core/agent'
import { createCodeMode as createMastraCodeMode, createTool } from '@mastra/core/tools'
import { toolDefinition } from '@tanstack/ai'
import { createCodeMode as createTanstackCodeMode } from '@tanstack/ai-code-mode'
import { generateText, tool as aiTool } from 'ai'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { IsolatePtcRuntime } from 'code-runtime-native'
import { codeRuntimeTool } from 'code-runtime-native/ai-sdk'
import { CodeRuntimeExecutor } from 'code-runtime-native/cloudflare'
import { CodeRuntimeTransport } from 'code-runtime-native/mastra'
import { createCodeRuntimeDriver } from 'code-runtime-native/tanstack'
import { scriptedModel } from './adapter-helpers.mjs'

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
afterAll(() => context.disable())

const exporter = new InMemorySpanExporter()
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('adapter-tracing')
let fiber
let runtime
beforeAll(async () => {
  const ctx = new Context()
  fiber = await ctx.plugin(IsolatePtcRuntime, { tracer, computeMs: 5000 })
  runtime = ctx.ptcRuntime
})
afterAll(() => fiber.dispose())

/** The tool every framework gets: its own span, under whatever span is active. */
const lookup = ({ q }) => tracer.startActiveSpan('lookup in the host', (span) => {
  span.end()
  return `found ${q}`
})


const tanstackLookup = toolDefinition({ name: 'lookup', description: 'Looks up.', inputSchema: z.object({ q: z.string() }) }).server(lookup)

const FRAMEWORKS = {
  async tanstack() {
    const { tool } = createTanstackCodeMode({ driver: createCodeRuntimeDriver({ runtime }), tools: [tanstackLookup], timeout: 5000 })
    const result = await tool.execute({ typescriptCode: "return await external_lookup({ q: 'a' })" }, { emitCustomEvent() {} })
    expect(result).toEqual({ success: true, result: 'found a', logs: [] })
  },
  async cloudflare() {
    const executor = new CodeRuntimeExecutor({ runtime })
    const tool = createCodeTool({ tools: [tanstackTools([tanstackLookup])], executor })
    expect(await tool.execute({ code: "async () => await codemode.lookup({ q: 'a' })" })).toEqual({ result: 'found a' })
  },
  async mastra() {
    const transport = new CodeRuntimeTransport({ runtime })
    const tools = { lookup: createTool({ id: 'lookup', description: 'Looks up.', inputSchema: z.object({ q: z.string() }), execute: lookup }) }
    const { tool, instructions } = createMastraCodeMode({ tools, timeout: 5000 }, transport)
    const { model } = scriptedModel('execute_typescript', { code: "return await external_lookup({ q: 'a' })" })
    const agent = new Agent({ id: 'coder', name: 'coder', instructions: ['You write code.', instructions], model, tools: { execute_typescript: tool } })
    const output = await agent.generate('Run it.')
    expect(output.toolResults[0]?.payload.result).toMatchObject({ result: 'found a' })
  },
  async 'ai-sdk'() {
    const code = codeRuntimeTool({ runtime, tools: { lookup: aiTool({ description: 'Looks up.', inputSchema: z.object({ q: z.string() }), execute: lookup }) } })
    const result = await generateText({
      model: scriptedModel('code', { code: "return await tools.lookup({ q: 'a' })" }).model,
      tools: { code },
      prompt: 'Run it.',
      stopWhen: ({ steps }) => steps.length === 2,
    })
    const outcome = result.steps[0].content.find((part) => part.type === 'tool-result')
    expect(outcome?.output).toMatchObject({ value: 'found a' })
  },
}

describe.each(Object.keys(FRAMEWORKS))('%s', (framework) => {
  it("names the call after the framework's tool, and nests the tool's span under it", async () => {
    exporter.reset()
    await tracer.startActiveSpan('agent turn', async (turn) => {
      try {
        await FRAMEWORKS[framework]()
      } finally {
        turn.end()
      }
    })
    const { calls, callCount } = runtime.lastRunStats()
    expect(callCount).toBe(1)
    const name = calls[0].name
    expect(name).toBe({ tanstack: 'external_lookup', cloudflare: 'codemode.lookup', mastra: 'lookup', 'ai-sdk': 'tools.lookup' }[framework])
    expect(calls[0].outcome).toBe('resolved')
    const spans = exporter.getFinishedSpans()
    const byName = (n) => spans.filter((s) => s.name === n)
    const [host] = byName('lookup in the host')
    const [call] = byName(`execute_tool ${name}`)
    const [run] = byName('code-runtime-native.run')
    const [turn] = byName('agent turn')
    expect(call.attributes['gen_ai.tool.name']).toBe(name)
    expect(host.parentSpanContext.spanId).toBe(call.spanContext().spanId)
    expect(call.parentSpanContext.spanId).toBe(run.spanContext().spanId)
    // The run's span is under the turn's (the framework's own spans, where it makes them, sit between).
    const ancestors = []
    for (let at = run; at?.parentSpanContext; at = spans.find((s) => s.spanContext().spanId === at.parentSpanContext.spanId)) {
      ancestors.push(at.parentSpanContext.spanId)
    }
    expect(ancestors).toContain(turn.spanContext().spanId)
  })
})
