// Shared pieces of the framework adapter suites (adapter-*.test.mjs): tools that record how they
// were called, the bookkeeping that proves every test of a suite ran, a model that calls one tool,
// and a store of JSON for paused programs.
import { setTimeout as sleep } from 'node:timers/promises'
import { MockLanguageModelV4 } from 'ai/test'
import { expect } from 'vitest'

/** The compute budget the suites give their runtimes (a `while (true) {}` ends at it). */
export const COMPUTE_MS = 300

/**
 * Host functions that record their calls in order and how many ran at once: `slow` calls wait
 * 30 ms, so two calls made together overlap and two made one after the other never do.
 */
export function recorder() {
  const calls = []
  let running = 0
  let most = 0
  const track = async (name, input, value) => {
    calls.push([name, input])
    running += 1
    most = Math.max(most, running)
    await sleep(30)
    running -= 1
    return value
  }
  return { calls, track, mostAtOnce: () => most }
}

/**
 * Records which tests of a suite ran; `check()` (in `afterAll`) fails unless exactly the named
 * tests ran, so a test that was skipped or never reached fails the file.
 */
export function ledger(names) {
  const ran = []
  return {
    ran: (name) => ran.push(name),
    check: () => expect([...ran].sort()).toEqual([...names].sort()),
  }
}

/** The token usage every mock model step reports. */
export const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

/**
 * A model (`ai/test`, standing in for the LLM) that calls tool `toolName` with `input` as call
 * `call-1`, then answers with text. `calls` holds the options of each of its steps (`prompts`
 * their prompts: what it was shown); `steps` what it has left to say.
 */
export function scriptedModel(toolName, input) {
  const steps = [
    {
      content: [{ type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) }],
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage: USAGE,
      warnings: [],
    },
    { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage: USAGE, warnings: [] },
  ]
  const calls = []
  const prompts = []
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      calls.push(options)
      prompts.push(options.prompt)
      return steps.shift()
    },
  })
  return { model, calls, prompts, steps }
}

/** A store of JSON text, as a database would keep paused programs; `rows` is what it holds. */
export function jsonStore() {
  const rows = new Map()
  return {
    rows,
    get: async (key) => (rows.has(key) ? JSON.parse(rows.get(key)) : undefined),
    set: async (key, entry) => void rows.set(key, JSON.stringify(entry)),
    delete: async (key) => void rows.delete(key),
  }
}
