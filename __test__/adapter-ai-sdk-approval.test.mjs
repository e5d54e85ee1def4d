// code-runtime-native/ai-sdk's tools that need approval, through the AI SDK's own approval flow
// (docs/durable.md#the-ai-sdk): `generateText` of ai 7.0.173 with a model from `ai/test` standing
// in for the LLM, a conversation kept as the SDK's messages, and the user's answers as the SDK's
// `tool-approval-response` parts. Every assertion is on what the SDK returns and what the model
// is shown, and on how often each tool really ran: never twice.
import { describe, expect, it } from 'vitest'
import { Context } from 'cordis'
import { generateText, stepCountIs, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { z } from 'zod'
import { IsolatePtcRuntime, PythonPtcRuntime } from 'code-runtime-native'
import { codeRuntimeTool } from 'code-runtime-native/ai-sdk'
import { COMPUTE_MS, USAGE, jsonStore, ledger } from './adapter-helpers.mjs'
import { KEPT_BYTES, KEPT_RUNS, RecentJournals } from '../lib/adapters/approval.mjs'
import { codeTools } from './ai-sdk-helpers.mjs'
import { PYTHON } from './python-helpers.mjs'

const TESTS = {
  offered: 'tools that need approval are offered and marked; a program that calls none runs once, with no approval asked',
  approve: 'a program pauses at a call that needs approval; approved, it goes on without calling any tool twice',
  deny: 'a denied program calls nothing more, and the model is told it was denied',
  restart: 'approved in another process: a new tool on a new runtime resumes from a shared store of JSON',
  second: 'a second call that needs approval: the model runs the same code again, the user approves again',
  parallel: 'calls that need approval started together pause one at a time, and each runs once',
  rule: 'a needsApproval function decides per input: a call it lets through runs at once',
  lost: 'an approved program whose paused run is gone runs nothing, and the model is told why',
  setting: 'under a generateText toolApproval that approves the code tool, a pause still never makes a call twice',
  tampered: 'a stored paused run or journal that was tampered with is refused, saying what is wrong, and nothing more runs',
  python: 'Python programs pause and resume the same way',
  borrowed: 'a borrowed runtime without runDurable leaves tools that need approval out, as approvals: false does',
  store: 'the default store keeps the newest paused programs, at most KEPT_RUNS of them within KEPT_BYTES of JSON',
}
const suite = ledger(Object.values(TESTS))
const codeTool = codeTools(suite)
const step = (content, unified) => ({ content, finishReason: { unified, raw: undefined }, usage: USAGE, warnings: [] })
/** The model's step that runs `code` as tool call `id`. */
const runs = (id, code) => step([{ type: 'tool-call', toolCallId: id, toolName: 'code', input: JSON.stringify({ code }) }], 'tool-calls')
const answers = step([{ type: 'text', text: 'done' }], 'stop')

/** One conversation as an application keeps it: the SDK's messages, turn after turn. */
class Conversation {
  constructor(tools) {
    this.tools = tools
    this.messages = [{ role: 'user', content: 'Run it.' }]
    this.prompts = []
    this.options = {}
  }

  /** One `generateText` call whose model takes `steps` in turn; its messages join the history. */
  async turn(steps) {
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        this.prompts.push(options.prompt)
        return steps.shift()
      },
    })
    const result = await generateText({ model, tools: this.tools, messages: this.messages, stopWhen: stepCountIs(5), ...this.options })
    this.messages.push(...result.responseMessages)
    return result
  }

  /** The user's answer to every approval the last turn asked. */
  answer(result, approved, reason) {
    const requests = result.content.filter((part) => part.type === 'tool-approval-request')
    const content = requests.map(({ approvalId }) => ({ type: 'tool-approval-response', approvalId, approved, ...(reason ? { reason } : {}) }))
    this.messages.push({ role: 'tool', content })
    return requests.map((request) => request.toolCall.toolCallId)
  }

  /** What the model was last shown of tool call `id`'s outcome. */
  shown(id) {
    for (const prompt of [...this.prompts].reverse()) {
      for (const message of [...prompt].reverse()) {
        const part = message.role === 'tool' ? message.content.find((p) => p.type === 'tool-result' && p.toolCallId === id) : undefined
        if (part !== undefined) return part.output
      }
    }
    return undefined
  }
}

/** `lookup` (free) and `send` (needs approval, or `rule`), recording each real run. */
function mailTools(rule = true) {
  const ran = []
  const lookup = tool({
    description: 'Looks a number up.',
    inputSchema: z.object({ k: z.number() }),
    execute: async ({ k }) => {
      ran.push(['lookup', k])
      return k * 10
    },
  })
  const send = tool({
    description: 'Sends a number.',
    inputSchema: z.object({ to: z.number() }),
    needsApproval: rule,
    execute: async ({ to }) => {
      ran.push(['send', to])
      return `sent ${to}`
    },
  })
  return { tools: { lookup, send }, ran }
}


const LOOKUP_THEN_SEND = `
  const a: number = await tools.lookup({ k: 1 })
  console.log('looked', a)
  const r = await tools.send({ to: a })
  return { a, r }`

describe('the AI SDK: tools that need approval, from a program', () => {
  it(TESTS.offered, async () => {
    const { tools, ran } = mailTools()
    const code = codeTool({ tools })
    const chat = new Conversation({ code })
    const result = await chat.turn([runs('call-1', 'return await tools.lookup({ k: 4 })'), answers])
    expect(result.content.some((part) => part.type === 'tool-approval-request')).toBe(false)
    expect(chat.shown('call-1')).toEqual({ type: 'json', value: { logs: [], value: 40 } })
    expect(ran).toEqual([['lookup', 4]])
    expect(chat.prompts).toHaveLength(2)
    expect(code.description).toContain('- tools["send"](input): (needs approval) Sends a number.')
    expect(code.description).toContain('Tools marked (needs approval) ask the user first')
    suite.ran(TESTS.offered)
  })

  it(TESTS.approve, async () => {
    const { tools, ran } = mailTools()
    const code = codeTool({ tools })
    const chat = new Conversation({ code })
    const asked = await chat.turn([runs('call-1', LOOKUP_THEN_SEND)])
    expect(chat.answer(asked, true)).toEqual(['call-1'])
    expect(await code.suspension('call-1')).toEqual({ tool: 'send', input: { to: 10 } })
    expect(ran).toEqual([['lookup', 1]])
    await chat.turn([answers])
    expect(chat.shown('call-1')).toEqual({ type: 'json', value: { logs: ['looked 10'], value: { a: 10, r: 'sent 10' } } })
    expect(ran).toEqual([['lookup', 1], ['send', 10]])
    expect(await code.suspension('call-1')).toBeUndefined()
    suite.ran(TESTS.approve)
  })

  it(TESTS.deny, async () => {
    const { tools, ran } = mailTools()
    const code = codeTool({ tools })
    const chat = new Conversation({ code })
    const asked = await chat.turn([runs('call-1', LOOKUP_THEN_SEND)])
    chat.answer(asked, false, 'not that one')
    await chat.turn([answers])
    expect(chat.shown('call-1')).toEqual({ type: 'execution-denied', reason: 'not that one' })
    expect(ran).toEqual([['lookup', 1]])
    suite.ran(TESTS.deny)
  })

  it(TESTS.restart, async () => {
    const { tools, ran } = mailTools()
    const journals = jsonStore()
    const before = codeRuntimeTool({ tools, journals, config: { computeMs: COMPUTE_MS } })
    const chat = new Conversation({ code: before })
    const asked = await chat.turn([runs('call-1', LOOKUP_THEN_SEND)])
    await before.dispose()
    expect(journals.rows.size).toBe(1)
    chat.answer(asked, true)
    // Another process: a new tool, a new runtime, the history and the store kept.
    const ctx = new Context()
    const fiber = await ctx.plugin(IsolatePtcRuntime, { computeMs: COMPUTE_MS })
    try {
      chat.tools = { code: codeRuntimeTool({ tools, journals, runtime: ctx.ptcRuntime }) }
      await chat.turn([answers])
    } finally {
      await fiber.dispose()
    }
    expect(chat.shown('call-1')).toEqual({ type: 'json', value: { logs: ['looked 10'], value: { a: 10, r: 'sent 10' } } })
    expect(ran).toEqual([['lookup', 1], ['send', 10]])
    expect(journals.rows.size).toBe(0)
    suite.ran(TESTS.restart)
  })

  it(TESTS.second, async () => {
    const { tools, ran } = mailTools()
    const code = codeTool({ tools })
    const chat = new Conversation({ code })
    const program = 'const a = await tools.send({ to: 1 }); console.log(a); const b = await tools.send({ to: 2 }); return [a, b]'
    chat.answer(await chat.turn([runs('call-1', program)]), true)
    // Approved, it reaches the second send and pauses again; the model runs the same code again.
    const again = await chat.turn([runs('call-2', program)])
    const paused = chat.shown('call-1')
    expect(paused.value).toMatchObject({ logs: ['sent 1'], suspended: { tool: 'send', input: { to: 2 } } })
    expect(paused.value.message).toContain('call this tool again with exactly the same code')
    expect(ran).toEqual([['send', 1]])
    expect(chat.answer(again, true)).toEqual(['call-2'])
    expect(await code.suspension('call-2')).toEqual({ tool: 'send', input: { to: 2 } })
    await chat.turn([answers])
    expect(chat.shown('call-2')).toEqual({ type: 'json', value: { logs: ['sent 1'], value: ['sent 1', 'sent 2'] } })
    expect(ran).toEqual([['send', 1], ['send', 2]])
    suite.ran(TESTS.second)
  })

  it(TESTS.parallel, async () => {
    const { tools, ran } = mailTools()
    const code = codeTool({ tools })
    const chat = new Conversation({ code })
    const program = 'const [n, a, b] = await Promise.all([tools.lookup({ k: 3 }), tools.send({ to: 1 }), tools.send({ to: 2 })]); return [n, a, b]'
    chat.answer(await chat.turn([runs('call-1', program)]), true)
    expect(ran).toEqual([['lookup', 3]])
    chat.answer(await chat.turn([runs('call-2', program)]), true)
    await chat.turn([answers])
    expect(chat.shown('call-2')).toEqual({ type: 'json', value: { logs: [], value: [30, 'sent 1', 'sent 2'] } })
    expect(ran.sort()).toEqual([['lookup', 3], ['send', 1], ['send', 2]])
    suite.ran(TESTS.parallel)
  })

  it(TESTS.rule, async () => {
    const asked = []
    const { tools, ran } = mailTools(async ({ to }, { toolCallId }) => {
      asked.push([to, toolCallId.split('/').slice(0, 2).join('/')])
      return to > 100
    })
    const code = codeTool({ tools })
    const chat = new Conversation({ code })
    const program = 'const a = await tools.send({ to: 5 }); const b = await tools.send({ to: 500 }); return [a, b]'
    chat.answer(await chat.turn([runs('call-1', program)]), true)
    expect(ran).toEqual([['send', 5]])
    await chat.turn([answers])
    expect(chat.shown('call-1')).toEqual({ type: 'json', value: { logs: [], value: ['sent 5', 'sent 500'] } })
    expect(ran).toEqual([['send', 5], ['send', 500]])
    // Asked for each call the program made for real; the approved one is not asked again.
    expect(asked).toEqual([[5, 'call-1/send'], [500, 'call-1/send']])
    suite.ran(TESTS.rule)
  })

  it(TESTS.lost, async () => {
    const { tools, ran } = mailTools()
    const journals = jsonStore()
    const code = codeTool({ tools, journals })
    const chat = new Conversation({ code })
    chat.answer(await chat.turn([runs('call-1', LOOKUP_THEN_SEND)]), true)
    journals.rows.clear()
    await chat.turn([answers])
    const shown = chat.shown('call-1')
    expect(shown.type).toBe('error-text')
    expect(shown.value).toContain('was approved, but its paused run is not in the journal store')
    expect(ran).toEqual([['lookup', 1]])
    suite.ran(TESTS.lost)
  })

  it(TESTS.setting, async () => {
    const { tools, ran } = mailTools()
    const code = codeTool({ tools })
    const chat = new Conversation({ code })
    chat.options = { toolApproval: { code: 'approved' } }
    // The SDK never asks the code tool: the program runs in execute and pauses there; the
    // model's rerun of the same code goes on from the pause (lookup is not called again).
    await chat.turn([runs('call-1', LOOKUP_THEN_SEND), runs('call-2', LOOKUP_THEN_SEND), answers])
    for (const id of ['call-1', 'call-2']) {
      expect(chat.shown(id).value).toMatchObject({ logs: ['looked 10'], suspended: { tool: 'send', input: { to: 10 } } })
    }
    expect(ran).toEqual([['lookup', 1]])
    suite.ran(TESTS.setting)
  })

  it(TESTS.tampered, async () => {
    const tamperings = [
      [(entry) => ({ ...entry, paused: null }), 'has no paused call ({ tool, input })'],
      [(entry) => ({ ...entry, kind: 'other' }), 'has a kind other than "approval" or "continue"'],
      [(entry) => ({ ...entry, journal: { ...entry.journal, version: 1 } }), 'request.journal'],
    ]
    for (const [tamper, message] of tamperings) {
      const { tools, ran } = mailTools()
      const journals = jsonStore()
      const code = codeTool({ tools, journals })
      const chat = new Conversation({ code })
      chat.answer(await chat.turn([runs('call-1', LOOKUP_THEN_SEND)]), true)
      journals.rows.set('call-1', JSON.stringify(tamper(JSON.parse(journals.rows.get('call-1')))))
      await chat.turn([answers])
      const shown = chat.shown('call-1')
      expect(shown.type).toBe('error-text')
      expect(shown.value).toContain(message)
      expect(ran).toEqual([['lookup', 1]])
    }
    suite.ran(TESTS.tampered)
  })

  it(TESTS.python, async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(PythonPtcRuntime, { pythonBin: PYTHON, cpuSeconds: 5 })
    try {
      const { tools, ran } = mailTools()
      const code = codeRuntimeTool({ runtime: ctx.ptcRuntime, tools })
      const chat = new Conversation({ code })
      const program = 'a = await tools.lookup({"k": 1})\nprint("looked", a)\nr = await tools.send({"to": a})\nreturn {"a": a, "r": r}'
      chat.answer(await chat.turn([runs('call-1', program)]), true)
      expect(ran).toEqual([['lookup', 1]])
      await chat.turn([answers])
      expect(chat.shown('call-1')).toEqual({ type: 'json', value: { logs: ['looked 10'], value: { a: 10, r: 'sent 10' } } })
      expect(ran).toEqual([['lookup', 1], ['send', 10]])
    } finally {
      await fiber.dispose()
    }
    suite.ran(TESTS.python)
  })

  it(TESTS.borrowed, async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(IsolatePtcRuntime, { computeMs: COMPUTE_MS })
    try {
      const own = ctx.ptcRuntime
      // A host's runtime of the seam as it was: resolve() and run(), no runDurable().
      const plain = { language: 'typescript', resolve: (request) => own.resolve(request), run: (spec) => own.run(spec) }
      const program = 'return [typeof tools.send, await tools.lookup({ k: 2 })]'
      for (const options of [{ runtime: plain }, { runtime: own, approvals: false }]) {
        const { tools, ran } = mailTools()
        const code = codeRuntimeTool({ tools, ...options })
        expect(code.needsApproval).toBeUndefined()
        expect(code.description).not.toContain('send')
        const chat = new Conversation({ code })
        await chat.turn([runs('call-1', program), answers])
        expect(chat.shown('call-1')).toEqual({ type: 'json', value: { logs: [], value: ['undefined', 20] } })
        expect(ran).toEqual([['lookup', 2]])
      }
      expect(() => codeRuntimeTool({ tools: {}, approvals: 'yes' })).toThrow('options.approvals must be a boolean')
    } finally {
      await fiber.dispose()
    }
    suite.ran(TESTS.borrowed)
  })

  it(TESTS.store, () => {
    // A paused program's journal may be MAX_JOURNAL_BYTES: the host's memory is bounded by bytes too.
    const store = new RecentJournals()
    const large = { kind: 'approval', code: 'x'.repeat(KEPT_BYTES / 4), journal: {}, paused: {} }
    // Each a little over a quarter of KEPT_BYTES: three fit.
    for (const key of ['a', 'b', 'c', 'd', 'e']) store.set(key, large)
    expect([...store.keys()]).toStrictEqual(['c', 'd', 'e'])
    // Replacing an entry frees its bytes; a small one takes little room.
    store.set('c', { kind: 'approval', code: '', journal: {}, paused: {} })
    expect([...store.keys()]).toStrictEqual(['d', 'e', 'c'])
    store.set('b', { kind: 'approval', code: '', journal: {}, paused: {} })
    store.set('f', large)
    expect([...store.keys()]).toStrictEqual(['d', 'e', 'c', 'b', 'f'])
    store.set('h', large)
    expect([...store.keys()]).toStrictEqual(['e', 'c', 'b', 'f', 'h'])
    // The newest is kept whatever its size; by count, the oldest go first.
    store.set('g', { ...large, code: 'x'.repeat(KEPT_BYTES) })
    expect([...store.keys()]).toStrictEqual(['g'])
    for (let i = 0; i <= KEPT_RUNS; i++) store.set(i, { kind: 'continue', code: '', journal: {}, paused: {} })
    expect(store.size).toBe(KEPT_RUNS)
    expect(store.has(0)).toBe(false)
    expect(store.has(KEPT_RUNS)).toBe(true)
    suite.ran(TESTS.store)
  })
})
