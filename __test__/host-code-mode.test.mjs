// The old seam inside the agent host's real Code Mode (hosts up to 0.1.5): the host's published
// packages from npm — `@deepseek-ai/dsh-tools` 0.1.0-rc.8 in `code` mode, its agent loop, session
// store, system prompt and LLM runtime — with `defineCodeRuntimes(CodeRuntime)` as
// `ctx.codeRuntime` and a scripted model in place of the LLM. The model writes `run_code`
// programs; the loop runs them through this addon and hands the results back on the next step.
//
// The host's agent loop needs Node 22 (`Promise.withResolvers`). On an older Node this file proves
// that instead (the loop fails to load), and on Node 22+ it asserts every host test ran: a silent
// skip in CI's Node 22/24/26 passes would fail here.
import { afterAll, describe, expect, it, vi } from 'vitest'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 })
const NODE_MAJOR = Number(process.versions.node.split('.')[0])
const HOST_RUNS = NODE_MAJOR >= 22
const HOST_TESTS = [
  'typescript: a program calls tools, catches a ToolCallError, returns; the model sees the result',
  'typescript: a failed program reaches the model as a code run failure it can correct',
  'python: the Python SDK in the prompt, and a Python program through run_code',
]
const ran = []

afterAll(() => {
  expect(ran).toEqual(HOST_RUNS ? HOST_TESTS : [])
})

describe('the Node gate', () => {
  it(`Node ${NODE_MAJOR}: ${HOST_RUNS ? 'the host suite runs' : "the host's agent loop cannot load, so the host suite does not run"}`, async () => {
    if (HOST_RUNS) {
      expect(typeof Promise.withResolvers).toBe('function')
      return
    }
    expect(Promise.withResolvers).toBeUndefined()
    const { Context } = await import('@deepseek-ai/cordis')
    const { AgentLoop } = await import('@deepseek-ai/dsh-agent-loop')
    const { ToolRuntime } = await import('@deepseek-ai/dsh-tools')
    const ctx = new Context()
    await loadHostServices(ctx)
    await ctx.plugin(ToolRuntime, {})
    let error
    try {
      await ctx.plugin(AgentLoop, {})
    } catch (thrown) {
      error = thrown
    }
    expect(String(error?.message)).toBe('Promise.withResolvers is not a function')
  })
})

/** The services the host's agent loop injects, but the tool registry and the loop itself. */
async function loadHostServices(ctx) {
  const { SessionStore } = await import('@deepseek-ai/dsh-session')
  const { LlmRuntime } = await import('@deepseek-ai/dsh-llm')
  const { SystemPrompt } = await import('@deepseek-ai/dsh-system-prompt')
  const { AgentRegistry } = await import('@deepseek-ai/dsh-agent')
  await ctx.plugin(SessionStore)
  await ctx.plugin(LlmRuntime)
  await ctx.plugin(SystemPrompt, {})
  await ctx.plugin(AgentRegistry)
}

/** A model that answers each request with the next scripted step: a `run_code` call, or text. */
async function scriptedAdapter(steps) {
  const { LlmAdapter, CallId } = await import('@deepseek-ai/dsh-llm')
  const requests = []
  class ScriptedModel extends LlmAdapter {
    async *stream(options) {
      requests.push(options)
      const step = steps.shift() ?? { text: 'done' }
      if (step.code === undefined) {
        yield { type: 'block-start', index: 0, blockType: 'text' }
        yield { type: 'text-delta', index: 0, text: step.text }
        yield { type: 'block-end', index: 0, block: { type: 'text', text: step.text } }
        yield { type: 'finish', reason: { kind: 'stop' } }
        return
      }
      const id = CallId(`call-${requests.length}`)
      const args = JSON.stringify({ code: step.code, description: 'Run the scripted program' })
      yield { type: 'block-start', index: 0, blockType: 'tool-call' }
      yield { type: 'tool-call-delta', index: 0, id, name: 'run_code', argumentsDelta: args }
      yield { type: 'block-end', index: 0, block: { type: 'tool-call', id, name: 'run_code', arguments: args } }
      yield { type: 'finish', reason: { kind: 'tool-calls' } }
    }
  }
  return { adapter: new ScriptedModel(), requests }
}

/**
 * One user turn in the host's Code Mode with `Runtime` (`'IsolateCodeRuntime'` or
 * `'PythonCodeRuntime'`) as `ctx.codeRuntime`. Returns every request the model received and the
 * tool calls the programs made.
 */
async function codeModeTurn(Runtime, config, steps) {
  const { Context } = await import('@deepseek-ai/cordis')
  const { SessionId } = await import('@deepseek-ai/dsh-session')
  const { createUserMessage } = await import('@deepseek-ai/dsh-llm')
  const { ToolRuntime, defineTool } = await import('@deepseek-ai/dsh-tools')
  const { AgentLoop } = await import('@deepseek-ai/dsh-agent-loop')
  const { CodeRuntime } = await import('@deepseek-ai/dsh-code-runtime')
  const { defineCodeRuntimes } = await import('code-runtime-native')

  const ctx = new Context()
  await loadHostServices(ctx)
  const runtimeFiber = await ctx.plugin(defineCodeRuntimes(CodeRuntime)[Runtime], config)
  await ctx.plugin(ToolRuntime, { mode: 'code' })
  const loopFiber = await ctx.plugin(AgentLoop, {})
  const { adapter, requests } = await scriptedAdapter(steps)
  ctx.llm.registerAdapter(['scripted'], adapter)
  const toolCalls = []
  const number = { type: 'number' }
  ctx.tools.register(defineTool({
    name: 'double',
    description: 'Double a number.',
    parameters: { n: { ...number, required: true } },
    output: { schema: number, render: (_args, value) => [{ type: 'text', text: String(value) }] },
    async execute(args) {
      toolCalls.push(['double', args])
      return args.n * 2
    },
  }))
  ctx.tools.register(defineTool({
    name: 'lookup',
    description: 'Look a key up; fails for a missing key.',
    parameters: { key: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
    async execute(args) {
      toolCalls.push(['lookup', args])
      throw new Error(`no entry for ${args.key}`)
    },
  }))
  const handle = await ctx.agents.create({ sessionId: SessionId(`code-mode-${Runtime}-${Date.now()}`), agentOptions: { provider: 'scripted', model: 'scripted-1' } })
  handle.agent.followup(createUserMessage({ content: [{ type: 'text', text: 'Double 21 and look up "x".' }] }))
  // The follow-up wakes the driver; wait for it to start, then for the turn to finish.
  await vi.waitUntil(() => requests.length > 0, { timeout: 20_000 })
  await handle.agent.whenIdle()
  await handle.dispose()
  await loopFiber.dispose()
  // The runtime's sandbox processes or spare child end with it.
  await runtimeFiber.dispose()
  return { requests, toolCalls }
}

/** The tool result the model received on its second request: `{ isError, text }`. */
function toolResult(requests) {
  expect(requests.length).toBeGreaterThanOrEqual(2)
  const last = requests[1].messages.at(-1)
  const block = last.content.find((b) => b.type === 'tool-result')
  return { isError: block.isError, text: block.content.map((c) => c.text).join('') }
}

describe.runIf(HOST_RUNS)("the host's Code Mode (dsh-tools 0.1.0-rc.8) with this addon as ctx.codeRuntime", () => {
  it(HOST_TESTS[0], async () => {
    const code = `const r = await tools.double({ n: 21 })
try { await tools.lookup({ key: 'x' }) } catch (e) { console.log(e instanceof ToolCallError, e.toolName, e.message) }
console.log('doubled', r)
return { doubled: r }`
    const { requests, toolCalls } = await codeModeTurn('IsolateCodeRuntime', {}, [{ code }, { text: 'It is 42.' }])
    // The prompt the model read declares the TypeScript SDK this runtime serves.
    expect(requests[0].system).toContain('declare const tools')
    expect(requests[0].tools.map((t) => t.name)).toEqual(['run_code'])
    expect(toolCalls).toEqual([['double', { n: 21 }], ['lookup', { key: 'x' }]])
    const result = toolResult(requests)
    expect(result.isError).toBe(false)
    expect(result.text).toBe('true lookup no entry for x\ndoubled 42\n{\n  "doubled": 42\n}')
    expect(requests).toHaveLength(2)
    ran.push(HOST_TESTS[0])
  })

  it(HOST_TESTS[1], async () => {
    const code = "console.log('before')\nthrow new Error('kaboom')"
    const { requests } = await codeModeTurn('IsolateCodeRuntime', {}, [{ code }, { text: 'I will fix it.' }])
    const result = toolResult(requests)
    expect(result.isError).toBe(true)
    expect(result.text).toContain('code run failed (exception)')
    expect(result.text).toContain('kaboom')
    expect(result.text).toContain('before')
    ran.push(HOST_TESTS[1])
  })

  it(HOST_TESTS[2], async () => {
    const { PYTHON } = await import('./python-helpers.mjs')
    const code = `r = await tools.double({"n": 21})
try:
    await tools.lookup({"key": "x"})
except ToolCallError as e:
    print(e.toolName, str(e))
print("doubled", r)
return {"doubled": r}`
    const { requests, toolCalls } = await codeModeTurn('PythonCodeRuntime', { pythonBin: PYTHON }, [{ code }, { text: 'It is 42.' }])
    expect(requests[0].system).toMatch(/TypedDict/)
    expect(toolCalls).toEqual([['double', { n: 21 }], ['lookup', { key: 'x' }]])
    const result = toolResult(requests)
    expect(result.isError).toBe(false)
    expect(result.text).toBe('lookup no entry for x\ndoubled 42\n{\n  "doubled": 42\n}')
    ran.push(HOST_TESTS[2])
  })
})
