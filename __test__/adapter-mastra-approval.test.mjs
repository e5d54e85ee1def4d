// code-runtime-native/mastra's `createCodeMode` with tools that need approval, through Mastra's own
// approval flow (docs/durable.md#mastra): a real Mastra (@mastra/core 1.71.0) with its in-memory
// storage, an `Agent` whose model (`ai/test` of ai 7.0.173) calls `execute_typescript`, and the
// user's answers as Mastra's `approveToolCallGenerate` / `declineToolCallGenerate`. Every
// assertion is on what the agent hands back and the model is shown, and on how often each tool
// really ran: never twice.
import { afterAll, describe, expect, it } from 'vitest'
import { Context } from 'cordis'
import { Mastra } from '@mastra/core'
import { Agent } from '@mastra/core/agent'
import { InMemoryStore } from '@mastra/core/storage'
import { createTool } from '@mastra/core/tools'
import { z } from 'zod'
import { IsolatePtcRuntime } from 'code-runtime-native'
import { createCodeMode } from 'code-runtime-native/mastra'
import { COMPUTE_MS, jsonStore, ledger, scriptedModel } from './adapter-helpers.mjs'

const TESTS = {
  plain: 'without a tool that needs approval it is Mastra’s own Code Mode on this runtime; a program that calls none runs once',
  approve: 'a program pauses at a call that needs approval, Mastra asks for that tool with its arguments, and approved it goes on without calling any tool twice',
  twice: 'two calls that need approval, in turn or started together: Mastra asks twice, each tool runs once',
  decline: 'a declined call runs nothing more, and the model is told',
  restart: 'approved after a restart: a new Mastra on the same storage and a new Code Mode on the same store of JSON resume it',
  rule: 'a requireApproval function decides per input: a call it lets through runs at once',
  outside: 'outside an agent run nothing can ask the user: the program stops at the call, saying so',
  tampered: 'a stored paused program that was tampered with is refused, saying what is wrong, and nothing more runs',
  borrowed: 'a borrowed runtime without runDurable cannot ask: a call that needs approval fails in the program, never runs',
}
const suite = ledger(Object.values(TESTS))
afterAll(() => suite.check())

/** `lookup` (free) and `send` (needs approval, or `rule`), recording each real run. */
function mailTools(rule = true) {
  const ran = []
  const lookup = createTool({
    id: 'lookup',
    description: 'Looks a number up.',
    inputSchema: z.object({ k: z.number() }),
    execute: async ({ k }) => (ran.push(['lookup', k]), k * 10),
  })
  const send = createTool({
    id: 'send',
    description: 'Sends a number.',
    inputSchema: z.object({ to: z.number() }),
    requireApproval: rule,
    execute: async ({ to }) => (ran.push(['send', to]), `sent ${to}`),
  })
  return { tools: { lookup, send }, ran }
}

/** A Mastra whose agent's model runs `code` once, then answers; `prompts` is what the model saw. */
function agentRunning(code, tool, instructions, storage = new InMemoryStore()) {
  const { model, prompts, steps } = scriptedModel('execute_typescript', { code })
  const coder = new Agent({ id: 'coder', name: 'coder', instructions: ['You write code.', instructions], model, tools: { execute_typescript: tool } })
  const mastra = new Mastra({ agents: { coder }, storage, logger: false })
  return { agent: mastra.getAgent('coder'), prompts, steps }
}

/** What the model was last shown of the code tool's call. */
const shown = (prompts) => prompts.at(-1)?.at(-1)?.content?.find((part) => part.type === 'tool-result')?.output


const LOOKUP_THEN_SEND = `
  const a: number = await external_lookup({ k: 1 })
  console.log('looked', a)
  const r = await external_send({ to: a })
  return { a, r }`

async function withMode(tools, use, options = {}) {
  const mode = createCodeMode({ tools }, { config: { computeMs: COMPUTE_MS }, ...options })
  try {
    return await use(mode)
  } finally {
    await mode.dispose()
  }
}

describe('Mastra Code Mode: tools that need approval, from a program', () => {
  it(TESTS.plain, async () => {
    const { ran, tools } = mailTools()
    const plainTools = { lookup: tools.lookup }
    await withMode(plainTools, async ({ tool, instructions }) => {
      expect(instructions).toContain('declare function external_lookup(')
      const { agent, prompts } = agentRunning('return await external_lookup({ k: 4 })', tool, instructions)
      const output = await agent.generate('Run it.')
      expect(output.finishReason).toBe('stop')
      expect(shown(prompts)).toEqual({ type: 'json', value: { success: true, result: 40, logs: [] } })
    })
    await withMode(tools, async ({ tool, instructions }) => {
      expect(instructions).toContain('declare function external_send(')
      const { agent, prompts } = agentRunning('return await external_lookup({ k: 5 })', tool, instructions)
      expect((await agent.generate('Run it.')).finishReason).toBe('stop')
      expect(shown(prompts)).toEqual({ type: 'json', value: { success: true, result: 50, logs: [] } })
    })
    expect(ran).toEqual([['lookup', 4], ['lookup', 5]])
    suite.ran(TESTS.plain)
  })

  it(TESTS.approve, async () => {
    const { ran, tools } = mailTools()
    await withMode(tools, async ({ tool, instructions }) => {
      const { agent, prompts } = agentRunning(LOOKUP_THEN_SEND, tool, instructions)
      const asked = await agent.generate('Run it.')
      expect(asked.finishReason).toBe('suspended')
      expect(asked.suspendPayload).toMatchObject({ toolCallId: 'call-1', toolName: 'send', args: { to: 10 } })
      expect(ran).toEqual([['lookup', 1]])
      const done = await agent.approveToolCallGenerate({ runId: asked.runId, toolCallId: 'call-1' })
      expect(done.finishReason).toBe('stop')
      expect(shown(prompts)).toEqual({ type: 'json', value: { success: true, result: { a: 10, r: 'sent 10' }, logs: ['looked 10'] } })
      expect(ran).toEqual([['lookup', 1], ['send', 10]])
    })
    suite.ran(TESTS.approve)
  })

  it(TESTS.twice, async () => {
    const programs = [
      'const a = await external_send({ to: 1 }); console.log(a); const b = await external_send({ to: 2 }); return [a, b]',
      'const [n, a, b] = await Promise.all([external_lookup({ k: 3 }), external_send({ to: 1 }), external_send({ to: 2 })]); return [n, a, b]',
    ]
    const expected = [
      { success: true, result: ['sent 1', 'sent 2'], logs: ['sent 1'] },
      { success: true, result: [30, 'sent 1', 'sent 2'], logs: [] },
    ]
    for (const [i, program] of programs.entries()) {
      const { ran, tools } = mailTools()
      await withMode(tools, async ({ tool, instructions }) => {
        const { agent, prompts } = agentRunning(program, tool, instructions)
        const first = await agent.generate('Run it.')
        expect(first.suspendPayload).toMatchObject({ toolName: 'send', args: { to: 1 } })
        const second = await agent.approveToolCallGenerate({ runId: first.runId, toolCallId: 'call-1' })
        expect(second.finishReason).toBe('suspended')
        expect(second.suspendPayload).toMatchObject({ toolName: 'send', args: { to: 2 } })
        const done = await agent.approveToolCallGenerate({ runId: first.runId, toolCallId: 'call-1' })
        expect(done.finishReason).toBe('stop')
        expect(shown(prompts)).toEqual({ type: 'json', value: expected[i] })
      })
      expect(ran.sort()).toEqual(i === 0 ? [['send', 1], ['send', 2]] : [['lookup', 3], ['send', 1], ['send', 2]])
    }
    suite.ran(TESTS.twice)
  })

  it(TESTS.decline, async () => {
    const { ran, tools } = mailTools()
    await withMode(tools, async ({ tool, instructions }) => {
      const { agent, prompts } = agentRunning(LOOKUP_THEN_SEND, tool, instructions)
      const asked = await agent.generate('Run it.')
      const done = await agent.declineToolCallGenerate({ runId: asked.runId, toolCallId: 'call-1', reason: 'not that one' })
      expect(done.finishReason).toBe('stop')
      expect(JSON.stringify(shown(prompts))).toContain('not that one')
    })
    expect(ran).toEqual([['lookup', 1]])
    suite.ran(TESTS.decline)
  })

  it(TESTS.restart, async () => {
    const { ran, tools } = mailTools()
    const storage = new InMemoryStore()
    const journals = jsonStore()
    const before = createCodeMode({ tools }, { config: { computeMs: COMPUTE_MS }, journals })
    const { agent } = agentRunning(LOOKUP_THEN_SEND, before.tool, before.instructions, storage)
    const asked = await agent.generate('Run it.')
    await before.dispose()
    expect(journals.rows.size).toBe(1)
    // Another process: a new Code Mode, a new runtime, a new Mastra on the same storage and store.
    await withMode(tools, async ({ tool, instructions }) => {
      const next = agentRunning(LOOKUP_THEN_SEND, tool, instructions, storage)
      next.steps.shift() // the model's tool call is in the stored run
      const done = await next.agent.approveToolCallGenerate({ runId: asked.runId, toolCallId: 'call-1' })
      expect(done.finishReason).toBe('stop')
      expect(shown(next.prompts)).toEqual({ type: 'json', value: { success: true, result: { a: 10, r: 'sent 10' }, logs: ['looked 10'] } })
    }, { journals })
    expect(ran).toEqual([['lookup', 1], ['send', 10]])
    expect(journals.rows.size).toBe(0)
    suite.ran(TESTS.restart)
  })

  it(TESTS.rule, async () => {
    const asked = []
    const { ran, tools } = mailTools(async ({ to }) => (asked.push(to), to > 100))
    await withMode(tools, async ({ tool, instructions }) => {
      const { agent, prompts } = agentRunning('const a = await external_send({ to: 5 }); const b = await external_send({ to: 500 }); return [a, b]', tool, instructions)
      const first = await agent.generate('Run it.')
      expect(first.suspendPayload).toMatchObject({ toolName: 'send', args: { to: 500 } })
      expect(ran).toEqual([['send', 5]])
      await agent.approveToolCallGenerate({ runId: first.runId, toolCallId: 'call-1' })
      expect(shown(prompts)).toEqual({ type: 'json', value: { success: true, result: ['sent 5', 'sent 500'], logs: [] } })
    })
    expect(ran).toEqual([['send', 5], ['send', 500]])
    // Asked for each call made for real; the approved one is not asked again.
    expect(asked).toEqual([5, 500])
    suite.ran(TESTS.rule)
  })

  it(TESTS.tampered, async () => {
    const { ran, tools } = mailTools()
    const journals = jsonStore()
    await withMode(tools, async ({ tool, instructions }) => {
      const { agent, prompts } = agentRunning(LOOKUP_THEN_SEND, tool, instructions)
      const asked = await agent.generate('Run it.')
      const [key] = journals.rows.keys()
      journals.rows.set(key, JSON.stringify({ ...JSON.parse(journals.rows.get(key)), code: 42 }))
      await agent.approveToolCallGenerate({ runId: asked.runId, toolCallId: 'call-1' })
      expect(JSON.stringify(shown(prompts))).toContain('has no string code')
    }, { journals })
    expect(ran).toEqual([['lookup', 1]])
    suite.ran(TESTS.tampered)
  })

  it(TESTS.borrowed, async () => {
    const { ran, tools } = mailTools()
    const ctx = new Context()
    const fiber = await ctx.plugin(IsolatePtcRuntime, { computeMs: COMPUTE_MS })
    try {
      const own = ctx.ptcRuntime
      // A host's runtime of the seam as it was: resolve() and run(), no runDurable().
      const plain = { language: 'typescript', resolve: (request) => own.resolve(request), run: (spec) => own.run(spec) }
      const { tool, instructions } = createCodeMode({ tools }, { runtime: plain })
      const program = 'const a = await external_lookup({ k: 2 }); try { await external_send({ to: a }) } catch (e) { return [a, e.message] }'
      const { agent, prompts } = agentRunning(program, tool, instructions)
      expect((await agent.generate('Run it.')).finishReason).toBe('stop')
      const { value } = shown(prompts)
      expect(value.success).toBe(true)
      expect(value.result).toEqual([20, 'Tool "send" needs approval, which this runtime cannot ask for (it has no runDurable()): the call did not run'])
    } finally {
      await fiber.dispose()
    }
    expect(ran).toEqual([['lookup', 2]])
    suite.ran(TESTS.borrowed)
  })

  it(TESTS.outside, async () => {
    const { ran, tools } = mailTools()
    await withMode(tools, async ({ tool }) => {
      const result = await tool.execute({ code: LOOKUP_THEN_SEND }, {})
      expect(result).toMatchObject({ success: false, logs: ['looked 10'], error: { name: 'ApprovalUnavailableError' } })
      expect(result.error.message).toContain('called send, which needs approval, outside an agent run that can suspend')
    })
    expect(ran).toEqual([['lookup', 1]])
    suite.ran(TESTS.outside)
  })
})
