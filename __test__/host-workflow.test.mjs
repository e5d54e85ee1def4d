// The host's workflow engine end to end on this addon: the real `PtcWorkflowEngine` of
// @deepseek-ai/dsh-workflow-ptc 0.1.6-alpha.1 (read from its published tarball in the cache, see
// workflow-guest.mjs; it cannot be a devDependency) composed in the host's cordis with the
// host's real services from npm, and `IsolatePtcRuntime` as `ctx.ptcRuntime`. The engine sends its
// own guest program (a data: module that runs the script in node:vm) to our isolate; its `agent()`
// children are real host agents started through the host's subagent service and in-process spawn
// provider, answered by a scripted model.
//
// Versions: dsh-workflow-ptc 0.1.6-alpha.1 declares its host peers at ^0.1.6-alpha.1, which npm
// does not have; this file composes what npm has: @deepseek-ai/cordis 4.0.4, dsh-workflow,
// dsh-sandbox-policy, dsh-subagent, dsh-subagent-spawn-in-process,
// dsh-subagent-in-process-driver, dsh-agent, dsh-agent-loop, dsh-llm, dsh-session,
// dsh-system-prompt and dsh-tools at 0.1.0-rc.8, dsh-ptc-runtime 0.1.6-alpha.1,
// dsh-util-values 0.1.2-alpha.2 (the engine asks ^0.1.6-alpha.1; its own peer dsh-invariants
// ^0.1.2-alpha.2 is unpublished, so package.json overrides it to 0.1.0-rc.8) and schemastery
// 3.18.4. The engine's imports resolve to these very module instances (checked below with
// `instanceof`).
//
// The host's agent loop needs Node 22 (`Promise.withResolvers`). On an older Node this file proves
// what fails instead (the engine loads and mounts; the agent loop, and so every parent agent,
// cannot), and on Node 22+ it asserts every host test ran.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { importableEngine } from './workflow-guest.mjs'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 })
const NODE_MAJOR = Number(process.versions.node.split('.')[0])
const HOST_RUNS = NODE_MAJOR >= 22
const CONTAINMENTS = ['process', 'thread']
const CASES = [
  'a script returns a JSON value built from its args',
  'agent() children, two in parallel(), with phase() and log(): their text reaches the script, the engine emits workflow/* events',
  'run.cancel() while a child hangs: stopReason cancelled, the child aborted and disposed',
  "the request's signal while two children hang: stopReason cancelled, both children disposed",
  "an error thrown in the script is placed at the script's own line and column",
  'a script awaiting a promise nothing can settle ends at once as an error',
]
const HOST_TESTS = CONTAINMENTS.flatMap((containment) => CASES.map((name) => `${containment}: ${name}`))
const ran = []
const WORKSPACE = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'crn-host-workflow-')))

afterAll(() => {
  fs.rmSync(WORKSPACE, { recursive: true, force: true })
  expect(ran).toEqual(HOST_RUNS ? HOST_TESTS : [])
})

/** The host's modules this file composes, and the engine from the cache. */
async function hostModules() {
  const { default: PtcWorkflowEngine } = await import(importableEngine())
  const { Context } = await import('@deepseek-ai/cordis')
  const { PtcRuntime } = await import('@deepseek-ai/dsh-ptc-runtime')
  const { definePtcRuntimes } = await import('code-runtime-native')
  return {
    PtcWorkflowEngine,
    Context,
    PtcRuntime,
    IsolatePtcRuntime: definePtcRuntimes(PtcRuntime).IsolatePtcRuntime,
    ...(await import('@deepseek-ai/dsh-workflow')),
    ...(await import('@deepseek-ai/dsh-session')),
    ...(await import('@deepseek-ai/dsh-llm')),
    ...(await import('@deepseek-ai/dsh-system-prompt')),
    ...(await import('@deepseek-ai/dsh-agent')),
    ...(await import('@deepseek-ai/dsh-tools')),
    ...(await import('@deepseek-ai/dsh-sandbox-policy')),
    ...(await import('@deepseek-ai/dsh-subagent')),
    SpawnInProcess: await import('@deepseek-ai/dsh-subagent-spawn-in-process'),
  }
}

/**
 * The host's services the engine needs, but the agent loop: sessions, the LLM runtime, the system
 * prompt, the agent registry, the tool registry, the sandbox policy (workspace-write over
 * WORKSPACE), the subagent service with its in-process spawn provider, our runtime as
 * `ctx.ptcRuntime`, and the engine.
 */
async function composeServices(m, ctx, runtimeConfig) {
  await ctx.plugin(m.SessionStore)
  await ctx.plugin(m.LlmRuntime)
  await ctx.plugin(m.SystemPrompt, {})
  await ctx.plugin(m.AgentRegistry)
  await ctx.plugin(m.ToolRuntime, {})
  await ctx.plugin(m.SandboxPolicyService, { mode: 'workspace-write', workspaceRoot: WORKSPACE })
  await ctx.plugin(m.SubagentRuntime)
  await ctx.plugin(m.SpawnInProcess, {})
  const runtime = await ctx.plugin(m.IsolatePtcRuntime, runtimeConfig)
  const engine = await ctx.plugin(m.PtcWorkflowEngine, { maxConcurrentAgents: 4, syncTimeoutMs: 2000 })
  return { runtime, engine }
}

describe('the Node gate', () => {
  it(`Node ${NODE_MAJOR}: ${HOST_RUNS ? 'the host suite runs' : "the engine mounts, but the host's agent loop cannot load, so no parent agent exists and the host suite does not run"}`, async () => {
    if (HOST_RUNS) {
      expect(typeof Promise.withResolvers).toBe('function')
      return
    }
    expect(Promise.withResolvers).toBeUndefined()
    const m = await hostModules()
    const { AgentLoop } = await import('@deepseek-ai/dsh-agent-loop')
    const ctx = new m.Context()
    const { runtime, engine } = await composeServices(m, ctx, {})
    expect(ctx.workflowEngine).toBeInstanceOf(m.WorkflowEngine)
    expect(ctx.ptcRuntime.language).toBe('typescript')
    await expect(ctx.plugin(AgentLoop, {})).rejects.toThrow(/^Promise\.withResolvers is not a function$/)
    await engine.dispose()
    await runtime.dispose()
  })
})

/**
 * A model whose answer follows the `task:<word>` in the prompt it was given. `task:hang` waits for
 * the abort; `task:beta` and `task:gamma` each wait (up to 10 s) until both have arrived, so both
 * being in flight at once shows the two children ran side by side.
 */
function scriptedModel(m) {
  const prompts = []
  const hanging = []
  const together = { arrived: new Set(), both: Promise.withResolvers(), met: false }
  class ScriptedModel extends m.LlmAdapter {
    async *stream(options) {
      const text = options.messages.flatMap((message) => message.content.filter((b) => b.type === 'text').map((b) => b.text)).join('\n')
      const task = /task:(\w+)/.exec(text)?.[1] ?? 'none'
      prompts.push(task)
      if (task === 'beta' || task === 'gamma') {
        together.arrived.add(task)
        if (together.arrived.size === 2) {
          together.met = true
          together.both.resolve()
        }
        let timer
        await Promise.race([together.both.promise, new Promise((resolve) => { timer = setTimeout(resolve, 10_000) })])
        clearTimeout(timer)
      }
      if (task === 'hang') {
        hanging.push(task)
        await new Promise((_, reject) => {
          if (options.signal.aborted) reject(options.signal.reason)
          options.signal.addEventListener('abort', () => reject(options.signal.reason), { once: true })
        })
      }
      const answer = `${task.toUpperCase()} from a child`
      yield { type: 'block-start', index: 0, blockType: 'text' }
      yield { type: 'text-delta', index: 0, text: answer }
      yield { type: 'block-end', index: 0, block: { type: 'text', text: answer } }
      yield { type: 'finish', reason: { kind: 'stop' } }
    }
  }
  return { adapter: new ScriptedModel(), prompts, hanging, together }
}

describe.runIf(HOST_RUNS).each(CONTAINMENTS)("the host's PtcWorkflowEngine (dsh-workflow-ptc 0.1.6-alpha.1) on IsolatePtcRuntime, containment %s", (containment) => {
  let m
  let ctx
  let model
  let parent
  const specs = []
  const events = []
  const fibers = []

  beforeAll(async () => {
    m = await hostModules()
    const { AgentLoop } = await import('@deepseek-ai/dsh-agent-loop')
    ctx = new m.Context()
    // The runtime the engine runs on, as it is; the subclass only records the specs it is handed.
    class Recorded extends m.IsolatePtcRuntime {
      run(spec) {
        specs.push(spec)
        return super.run(spec)
      }
    }
    Object.defineProperty(Recorded, 'name', { value: 'IsolatePtcRuntime' })
    const ptc = { ...m, IsolatePtcRuntime: Recorded }
    const { runtime, engine } = await composeServices(ptc, ctx, { containment })
    fibers.push(await ctx.plugin(AgentLoop, {}), engine, runtime)
    model = scriptedModel(m)
    ctx.llm.registerAdapter(['scripted'], model.adapter)
    for (const name of ['workflow/start', 'workflow/phase', 'workflow/log', 'workflow/agent-start', 'workflow/agent-end', 'workflow/end']) {
      ctx.on(name, (info, payload) => {
        events.push({ name, run: info.id, payload })
      })
    }
    parent = await ctx.agents.create({
      sessionId: m.SessionId(`workflow-parent-${containment}-${Date.now()}`),
      meta: { cwd: WORKSPACE },
      agentOptions: { provider: 'scripted', model: 'scripted-1' },
    })
  })

  afterAll(async () => {
    await parent?.dispose()
    for (const fiber of fibers) await fiber.dispose()
    expect(ctx.get('ptcRuntime')).toBeUndefined()
  })

  const meta = (name) => ({ name, description: `the ${name} workflow` })
  const eventsOf = (run) => events.filter((e) => e.run === run.id).map(({ name, payload }) => [name, payload])

  it(`${containment}: ${CASES[0]}`, async () => {
    // The engine's imports are the module instances this file composes.
    expect(ctx.workflowEngine).toBeInstanceOf(m.WorkflowEngine)
    expect(() => ctx.workflowEngine.start({ meta: { name: '' }, script: 'return 1', parent: parent.agent })).toThrow(m.WorkflowError)
    expect(ctx.ptcRuntime).toBeInstanceOf(m.PtcRuntime)
    expect(ctx.ptcRuntime.containment).toBe(containment)

    const run = ctx.workflowEngine.start({
      meta: meta('sums'),
      script: 'const total = args.xs.reduce((a, b) => a + b, 0)\nreturn { total, doubled: args.xs.map((x) => x * 2), label: `n=${args.xs.length}`, none: null }',
      args: { xs: [1, 2, 3, 4] },
      parent: parent.agent,
    })
    const result = await run.result
    expect(result).toStrictEqual({ value: { total: 10, doubled: [2, 4, 6, 8], label: 'n=4', none: null }, stopReason: 'completed', agentsStarted: 0 })
    // What the engine handed our runtime: its own program, the workflowHost binding, the parent
    // session's workspace and resolved policy, no deadline.
    const spec = specs.at(-1)
    expect(spec.program).toMatch(/^const \{ runWorkflowGuest \} = await import\("data:text\/javascript,/)
    expect(spec.bindings.map((b) => [b.global, Object.keys(b.functions).sort()])).toEqual([['workflowHost', ['begin', 'childResult', 'disposeChild', 'progress', 'startChild']]])
    expect(spec.cwd).toBe(WORKSPACE)
    expect(spec.sandboxPolicy).toStrictEqual({ mode: 'workspace-write', workspaceRoot: WORKSPACE, sessionId: parent.agent.session.id })
    expect(spec.timeoutMs).toBeNull()
    expect(eventsOf(run)).toEqual([
      ['workflow/start', undefined],
      ['workflow/end', { stopReason: 'completed', agentsStarted: 0 }],
    ])
    ran.push(`${containment}: ${CASES[0]}`)
  })

  it(`${containment}: ${CASES[1]}`, async () => {
    model.prompts.length = 0
    const script = `phase('gather')
log('starting ' + args.topic)
const first = await agent('task:alpha about ' + args.topic)
phase('fan out')
const [b, c] = await parallel([() => agent('task:beta'), () => agent('task:gamma', { label: 'third' })])
log('done')
return { first, b, c }`
    const run = ctx.workflowEngine.start({ meta: meta('fan'), script, args: { topic: 'tides' }, parent: parent.agent })
    const result = await run.result
    expect(result).toStrictEqual({
      value: { first: 'ALPHA from a child', b: 'BETA from a child', c: 'GAMMA from a child' },
      stopReason: 'completed',
      agentsStarted: 3,
    })
    expect(model.prompts.sort()).toEqual(['alpha', 'beta', 'gamma'])
    const seen = eventsOf(run)
    expect(seen[0]).toEqual(['workflow/start', undefined])
    expect(seen.at(-1)).toEqual(['workflow/end', { stopReason: 'completed', agentsStarted: 3 }])
    expect(seen.filter(([name]) => name === 'workflow/phase' || name === 'workflow/log')).toEqual([
      ['workflow/phase', 'gather'],
      ['workflow/log', 'starting tides'],
      ['workflow/phase', 'fan out'],
      ['workflow/log', 'done'],
    ])
    const starts = seen.filter(([name]) => name === 'workflow/agent-start').map(([, info]) => info).sort((a, b) => a.seq - b.seq)
    const ends = seen.filter(([name]) => name === 'workflow/agent-end').map(([, info]) => info).sort((a, b) => a.seq - b.seq)
    expect(starts.map(({ seq, label, phase }) => ({ seq, label, phase }))).toEqual([
      { seq: 1, label: 'task:alpha about tides', phase: 'gather' },
      { seq: 2, label: 'task:beta', phase: 'fan out' },
      { seq: 3, label: 'third', phase: 'fan out' },
    ])
    expect(ends).toEqual(starts.map((info) => ({ ...info, outcome: 'completed' })))
    // Each child was a host agent of its own (its own session), created under the parent and
    // disposed by the time the run settled.
    expect(new Set(starts.map((info) => info.childId)).size).toBe(3)
    for (const { childId } of starts) expect(ctx.agents.get(childId)).toBeUndefined()
    expect(ctx.agents.list().map((agent) => agent.session.id)).toEqual([parent.agent.session.id])
    // The second phase's children ran side by side: each one's model request waited for the other's.
    expect(model.together.met).toBe(true)
    ran.push(`${containment}: ${CASES[1]}`)
  })

  it(`${containment}: ${CASES[2]}`, async () => {
    model.hanging.length = 0
    const run = ctx.workflowEngine.start({
      meta: meta('stuck'),
      script: "log('before')\nconst answer = await agent('task:hang')\nlog('never')\nreturn answer",
      parent: parent.agent,
    })
    await vi.waitUntil(() => model.hanging.length === 1, { timeout: 20_000 })
    const child = eventsOf(run).find(([name]) => name === 'workflow/agent-start')[1]
    expect(ctx.agents.get(child.childId)).toBeDefined()
    run.cancel('stop it')
    const result = await run.result
    expect(result).toStrictEqual({ value: null, stopReason: 'cancelled', error: 'workflow run cancelled: stop it', agentsStarted: 1 })
    // The child's run was aborted and disposed with the workflow; the engine closed its agent.
    expect(ctx.agents.get(child.childId)).toBeUndefined()
    expect(ctx.agents.list().map((agent) => agent.session.id)).toEqual([parent.agent.session.id])
    const seen = eventsOf(run)
    expect(seen.filter(([name]) => name === 'workflow/log')).toEqual([['workflow/log', 'before']])
    expect(seen.filter(([name]) => name === 'workflow/agent-end')).toEqual([['workflow/agent-end', { ...child, outcome: 'cancelled' }]])
    expect(seen.at(-1)).toEqual(['workflow/end', { stopReason: 'cancelled', error: 'workflow run cancelled: stop it', agentsStarted: 1 }])
    await run.dispose()
    ran.push(`${containment}: ${CASES[2]}`)
  })

  it(`${containment}: ${CASES[3]}`, async () => {
    model.hanging.length = 0
    const controller = new AbortController()
    const run = ctx.workflowEngine.start({
      meta: meta('waits'),
      script: "log('waiting')\nreturn await parallel([() => agent('task:hang'), () => agent('task:hang')])",
      parent: parent.agent,
      signal: controller.signal,
    })
    await vi.waitUntil(() => model.hanging.length === 2, { timeout: 20_000 })
    const children = eventsOf(run).filter(([name]) => name === 'workflow/agent-start').map(([, info]) => info.childId)
    expect(children.map((id) => ctx.agents.get(id) !== undefined)).toEqual([true, true])
    const started = Date.now()
    controller.abort()
    const result = await run.result
    expect(Date.now() - started).toBeLessThan(5000)
    expect(result).toStrictEqual({ value: null, stopReason: 'cancelled', error: 'workflow run cancelled: workflow signal aborted', agentsStarted: 2 })
    expect(ctx.agents.list().map((agent) => agent.session.id)).toEqual([parent.agent.session.id])
    expect(eventsOf(run).filter(([name]) => name === 'workflow/agent-end').map(([, info]) => info.outcome)).toEqual(['cancelled', 'cancelled'])
    // The runtime serves the next run.
    const next = await ctx.workflowEngine.start({ meta: meta('after'), script: 'return 2', parent: parent.agent }).result
    expect(next).toStrictEqual({ value: 2, stopReason: 'completed', agentsStarted: 0 })
    ran.push(`${containment}: ${CASES[3]}`)
  })

  it(`${containment}: ${CASES[4]}`, async () => {
    const script = "const rows = args.rows\nlog('rows ' + rows.length)\nfunction pick(row) {\n  return row.missing.field\n}\nreturn rows.map(pick)"
    const result = await ctx.workflowEngine.start({ meta: meta('broken'), script, args: { rows: [{}] }, parent: parent.agent }).result
    expect(result.stopReason).toBe('error')
    expect(result.value).toBeNull()
    expect(result.agentsStarted).toBe(0)
    // `row.missing.field` is on the script's line 4, column 22; `rows.map(pick)` on line 6, column 13.
    expect(result.error).toMatch(/^TypeError: Cannot read properties of undefined \(reading 'field'\)\n {4}at pick \(workflow:broken:4:22\)\n {4}at Array\.map \(<anonymous>\)\n {4}at workflow:broken:6:13\n/)
    const thrown = await ctx.workflowEngine.start({ meta: meta('throws'), script: "\n\n  throw new RangeError('out of range')", parent: parent.agent }).result
    expect(thrown.error).toMatch(/^RangeError: out of range\n {4}at workflow:throws:3:9\n/)
    ran.push(`${containment}: ${CASES[4]}`)
  })

  it(`${containment}: ${CASES[5]}`, async () => {
    // Nothing in the script's realm can settle this promise and no host call is pending, so our
    // runtime ends the program at once; the host's own Node backend's child would keep waiting on
    // its open control channel for a cancel (from dsh-ptc-runtime-node 0.1.6-alpha.1's source).
    const started = Date.now()
    const result = await ctx.workflowEngine.start({ meta: meta('stalls'), script: 'await new Promise(() => {})\nreturn 1', parent: parent.agent }).result
    expect(Date.now() - started).toBeLessThan(5000)
    expect(result).toStrictEqual({
      value: null,
      stopReason: 'error',
      error: 'workflow execution failed (exception): program can never complete: it awaits a promise that nothing can settle',
      agentsStarted: 0,
    })
    ran.push(`${containment}: ${CASES[5]}`)
  })
})
