// A Mastra Code Mode transport (`CodeModeTransport` of
// `@mastra/core/tools`) that runs each program in a fresh V8 isolate of this runtime instead of a
// `node` process in a workspace sandbox. Programs call flat globals `external_<sanitized id>`
// (Mastra's own `sanitizeToolId`, as its transport contract asks), each call goes to `dispatch`
// with the original tool id, and the result has Mastra's shape: `{ success, result?, logs,
// error?: { message, name?, line? } }`.
import { sanitizeToolId } from '@mastra/core/tools'
import { PREFIX } from '../request.mjs'
import { buildBridge } from './bridge.mjs'
import { describeFailure, ownPositions } from './failure.mjs'
import { ownedNameProblem } from './names.mjs'
import { AdapterRuntime } from './runtime.mjs'

export class CodeRuntimeTransport {
  /** The isolate is the boundary: Mastra needs no workspace sandbox for this transport. */
  get requiresSandbox() {
    return false
  }

  /** @param {{ runtime?: object, config?: object }} [options] */
  constructor(options = {}) {
    this.runtime = new AdapterRuntime(options, 'code-runtime-native/mastra')
  }

  /**
   * Runs one program. Mastra's `timeout` is the run's elapsed deadline (a `timeout` failure),
   * its `abortSignal` aborts it; the compute budget is the runtime's `computeMs`.
   */
  run(options) {
    return this.#run(options, (request) => this.runtime.run(request))
  }

  /**
   * One attempt of a durable program (docs/durable.md#mastra): `run()`'s result plus `journal`,
   * or `{ logs, suspended, journal }` where a tool threw `suspend(data)` (`suspended` is the data).
   */
  runDurable(options, journal) {
    return this.#run(options, (request) => this.runtime.runDurable(request, journal))
  }

  async #run({ program, toolIds, dispatch, timeout, abortSignal, onExternalCall, onExternalResult }, attempt) {
    const globals = externals(toolIds).map(({ toolId, name }) => ({
      name,
      label: toolId,
      call: (args) => callTool(toolId, args[0], dispatch, onExternalCall, onExternalResult),
    }))
    const { prelude, binding } = buildBridge({ globals, errorNames: true })
    const result = await attempt({ program: prelude + program, bindings: [binding], signal: abortSignal, timeoutMs: timeout })
    const frame = { prelude: prelude.length }
    const logs = result.logs.map((entry) => ownPositions(entry, frame))
    const journal = 'journal' in result ? { journal: result.journal } : {}
    if ('suspended' in result) return { logs, suspended: result.suspended.data, ...journal }
    if (result.error === undefined) {
      return 'value' in result ? { success: true, result: result.value, logs, ...journal } : { success: true, logs, ...journal }
    }
    return { success: false, error: mastraError(describeFailure(result.error, frame)), logs, ...journal }
  }

  /** Ends the runtime this transport started (runs in flight end as `AbortError`). */
  dispose() {
    return this.runtime.dispose()
  }
}

/** Each tool id with its global, refusing two ids Mastra's sanitiser maps to one name. */
function externals(toolIds) {
  const seen = new Map()
  return toolIds.map((toolId) => {
    const name = `external_${sanitizeToolId(toolId)}`
    const earlier = seen.get(name)
    if (earlier !== undefined) {
      throw new Error(
        `${PREFIX}Code Mode tool ids ${JSON.stringify(earlier)} and ${JSON.stringify(toolId)} both map to ${name}: ` +
          'give one of the tools another id',
      )
    }
    const owned = ownedNameProblem(name)
    if (owned !== undefined) throw new Error(`${PREFIX}Code Mode tool id ${JSON.stringify(toolId)} maps to ${owned}: rename the tool`)
    seen.set(name, toolId)
    return { toolId, name }
  })
}

/** One tool call, with Mastra's tracing hooks around it (a hook that throws is ignored). */
async function callTool(toolId, input, dispatch, onExternalCall, onExternalResult) {
  const started = Date.now()
  quietly(() => onExternalCall?.(toolId, input))
  try {
    const value = await dispatch(toolId, input)
    quietly(() => onExternalResult?.(toolId, Date.now() - started))
    return value
  } catch (error) {
    quietly(() => onExternalResult?.(toolId, Date.now() - started, error))
    throw error
  }
}

function quietly(hook) {
  try {
    hook()
  } catch {}
}

/**
 * Mastra's `{ message, name?, line? }`: what the program threw (its name, the program's line),
 * or the runtime's failure under its kind's name (`TimeoutError`, `AbortError`, ...). A thrown
 * value that is not an Error has no name, as in Mastra's own transport.
 */
function mastraError(failure) {
  const error = { message: failure.message }
  if (failure.kind !== 'exception' || failure.thrown) error.name = failure.name
  if (failure.line !== undefined) error.line = failure.line
  return error
}
