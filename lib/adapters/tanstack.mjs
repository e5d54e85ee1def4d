// `code-runtime-native/tanstack`: an `IsolateDriver` for TanStack AI Code Mode
// (`@tanstack/ai-code-mode`). Each `execute(code)` runs the already-stripped JavaScript in a
// fresh V8 isolate of this runtime, with every binding as a global function of its key
// (`external_<tool name>`), `console.info/warn/error` entries prefixed `INFO: ` / `WARN: ` /
// `ERROR: ` as the framework parses them, and TanStack's `ExecutionResult` shape.
import { PREFIX } from '../request.mjs'
import { buildBridge } from './bridge.mjs'
import { describeFailure, ownPositions } from './failure.mjs'
import { isCallableName, ownedNameProblem } from './names.mjs'
import { AdapterRuntime } from './runtime.mjs'

const LEVELS = [['info', 'INFO: '], ['warn', 'WARN: '], ['error', 'ERROR: ']]
const DISPOSED_MESSAGE = 'the Code Mode context was disposed while its program ran'

/**
 * @param {{ runtime?: object, config?: object, timeout?: number, memoryLimit?: number }} [options]
 *   `timeout` / `memoryLimit`: defaults for a context that names none (TanStack's drivers use
 *   30000 ms and 128 MB); a context's `memoryLimit` is the heap cap of the runtime that runs it
 */
export function createCodeRuntimeDriver(options = {}) {
  const defaultTimeout = options.timeout ?? 30000
  const defaultMemoryLimit = options.memoryLimit ?? 128
  const borrowed = options.runtime != null ? new AdapterRuntime(options, 'code-runtime-native/tanstack') : undefined
  // Owned runtimes, one per heap cap a context asked for (a heap cap is a runtime's config).
  const owned = new Map()
  const runtimeFor = (memoryLimit) => {
    if (borrowed !== undefined) return borrowed
    let runtime = owned.get(memoryLimit)
    if (runtime === undefined) {
      const config = { ...options.config, maxOldGenerationSizeMb: memoryLimit }
      runtime = new AdapterRuntime({ config }, 'code-runtime-native/tanstack')
      owned.set(memoryLimit, runtime)
    }
    return runtime
  }
  return {
    async createContext(config) {
      const bridge = buildBridge({ globals: bindingGlobals(config?.bindings ?? {}), levels: LEVELS })
      const runtime = runtimeFor(config?.memoryLimit ?? defaultMemoryLimit)
      return new CodeRuntimeContext(runtime, bridge, config?.timeout ?? defaultTimeout)
    },
    /** Ends the runtimes this driver started (programs still running end as `AbortError`). */
    async dispose() {
      await Promise.all([...owned.values()].map((runtime) => runtime.dispose()))
    },
  }
}

/** The bindings as global functions, refusing keys a program could not call by name. */
function bindingGlobals(bindings) {
  return Object.keys(bindings).map((name) => {
    if (!isCallableName(name)) {
      throw new Error(
        `${PREFIX}binding ${JSON.stringify(name)} is not a JavaScript identifier, so a program cannot call it: ` +
          'give the tool a name of letters, digits, _ and $ (Code Mode exposes tool "x" as external_x)',
      )
    }
    const owned = ownedNameProblem(name)
    if (owned !== undefined) throw new Error(`${PREFIX}binding ${owned}: rename the tool`)
    const binding = bindings[name]
    if (typeof binding?.execute !== 'function') throw new Error(`${PREFIX}binding ${JSON.stringify(name)} has no execute function`)
    // A missing input is `{}`, as TanStack's own drivers send it.
    return { name, label: binding.name ?? name, call: (args) => binding.execute(args[0] ?? {}) }
  })
}

/** One context: its bindings and timeout; every `execute` is a fresh isolate. */
class CodeRuntimeContext {
  constructor(runtime, bridge, timeout) {
    this.runtime = runtime
    this.bridge = bridge
    this.timeout = timeout
    this.disposed = false
    // dispose() aborts this: the chat's abort never reaches a driver, so disposal ends a program.
    this.abort = new AbortController()
    this.running = new Set()
  }

  async execute(code) {
    if (this.disposed) return { success: false, error: { name: 'DisposedError', message: 'Context has been disposed' }, logs: [] }
    const { prelude, binding } = this.bridge
    const run = this.runtime.run({
      program: prelude + code,
      bindings: [binding],
      signal: this.abort.signal,
      timeoutMs: this.timeout,
    })
    this.running.add(run)
    try {
      const result = await run
      const frame = { prelude: prelude.length }
      const logs = result.logs.map((entry) => ownPositions(entry, frame))
      if (result.error === undefined) return { success: true, value: result.value, logs }
      return { success: false, error: normalizedError(describeFailure(result.error, frame)), logs }
    } catch (error) {
      // Misuse (an invalid runtime config, a timeout the runtime refuses): the framework's shape.
      return { success: false, error: { name: 'Error', message: error?.message ?? String(error) }, logs: [] }
    } finally {
      this.running.delete(run)
    }
  }

  /** Ends a program still running (its result is an `AbortError`) and refuses later ones. */
  async dispose() {
    if (this.disposed) return
    this.disposed = true
    this.abort.abort(DISPOSED_MESSAGE)
    await Promise.allSettled([...this.running])
  }
}

/**
 * TanStack's `NormalizedError`: the thrown name and message with the stack, or the runtime's
 * failure under its kind's name; `code` is the runtime's failure kind either way.
 */
function normalizedError(failure) {
  const error = { name: failure.name, message: failure.message, code: failure.kind }
  if (failure.stack !== undefined) error.stack = failure.stack
  return error
}
