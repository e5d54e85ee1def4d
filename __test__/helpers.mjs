// Shared test fixtures: real cordis contexts and real runtimes, never mocks.
import fs from 'node:fs'
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'

/** Loads an IsolateCodeRuntime into a fresh cordis context. */
/**
 * Loads an `IsolateCodeRuntime`. `CRN_TEST_CONTAINMENT` (`process` or `thread`) picks the
 * containment for suites that do not name one, so CI runs the isolate suites in both modes.
 */
export async function loadIsolate(config) {
  const ctx = new Context()
  const containment = process.env.CRN_TEST_CONTAINMENT
  const resolved = containment && config?.containment === undefined ? { ...config, containment } : config
  const fiber = await ctx.plugin(IsolateCodeRuntime, resolved)
  return { ctx, fiber, runtime: ctx.codeRuntime }
}

/**
 * The Code Mode namespace (`tools` with errorClass `ToolCallError`/`toolName`), with host
 * functions that count their calls.
 */
export function tools(functions = {}) {
  const calls = {}
  const counted = {}
  const all = {
    echo: async (x) => x,
    fail: async () => {
      throw new Error('nope')
    },
    double: async ({ n }) => n * 2,
    ...functions,
  }
  for (const [name, fn] of Object.entries(all)) {
    calls[name] = 0
    counted[name] = (...args) => {
      calls[name] += 1
      return fn(...args)
    }
  }
  return {
    calls,
    namespace: {
      global: 'tools',
      functions: counted,
      errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' },
    },
  }
}

/** Byte size of the result as the ledger counts it. */
export function ledgerBytes(result) {
  const logs = Buffer.byteLength(JSON.stringify(result.logs))
  if (result.error) return logs + Buffer.byteLength(JSON.stringify(result.error.message))
  if ('value' in result) return logs + Buffer.byteLength(JSON.stringify(result.value))
  return logs
}

/** Threads of this process (Linux). */
export async function threadCount() {
  const { readdir } = await import('node:fs/promises')
  return (await readdir('/proc/self/task')).length
}

/**
 * The ids of the host threads that belong to one run each: an isolate thread (thread tier) or a
 * run's supervisor (process tier). Told apart by name (the kernel keeps 15 bytes of it) and by
 * id, so threads that earlier tests leave finishing do not blur a count.
 */
export async function runThreads() {
  const { readdir, readFile } = await import('node:fs/promises')
  const ids = new Set()
  for (const task of await readdir('/proc/self/task')) {
    const name = await readFile(`/proc/self/task/${task}/comm`, 'utf8').catch(() => '')
    if (name === 'code-runtime-is\n' || name === 'code-runtime-su\n') ids.add(task)
  }
  return ids
}

/** Whether `value` is `depth` arrays of one element nested around `null` (checked iteratively). */
export function isNestedNull(value, depth) {
  for (let i = 0; i < depth; i++) {
    if (!Array.isArray(value) || value.length !== 1 || Object.getPrototypeOf(value) !== Array.prototype) return false
    value = value[0]
  }
  return value === null
}

/** This process's threads whose name (as the kernel keeps it: 15 bytes) is `comm`, read at once. */
export function threadsNamedNow(comm) {
  return fs.readdirSync('/proc/self/task').filter((task) => {
    try {
      return fs.readFileSync(`/proc/self/task/${task}/comm`, 'utf8') === `${comm}\n`
    } catch {
      return false
    }
  })
}

/**
 * Counts the host event loop's turns while a program runs: a 1 ms timer armed again after each
 * turn until `stop()`, which returns how many ran.
 */
export function loopTurns() {
  let turns = 0
  let running = true
  const turn = () => {
    turns += 1
    if (running) setTimeout(turn, 1)
  }
  setTimeout(turn, 1)
  return {
    stop: () => {
      running = false
      return turns
    },
  }
}
