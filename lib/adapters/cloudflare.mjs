// `code-runtime-native/cloudflare`: an `Executor` for Cloudflare's Code Mode
// (`@cloudflare/codemode`) that runs the model's async arrow function in a fresh V8 isolate of
// this runtime, on Node, where Cloudflare's own executors (a Worker loader, a browser iframe)
// do not run. Each provider is a namespace whose tools take any number of arguments, tool names
// are sanitised as Cloudflare's executors do, logs carry `[warn] ` / `[error] ` prefixes, and
// `execute()` never throws: a failure is `{ result: undefined, error: string, logs }`.
//
// Its types are structural (lib/adapters/cloudflare.d.ts): on Node only the package's
// `/browser` and `/tanstack-ai` entry points load, so this module imports nothing from it.
import { buildBridge } from './bridge.mjs'
import { describeFailure, ownPositions } from './failure.mjs'
import { JS_RESERVED_WORDS, isCallableName, ownedNameProblem } from './names.mjs'
import { AdapterRuntime } from './runtime.mjs'

const LEVELS = [['warn', '[warn] '], ['error', '[error] ']]
const MAIN = '__codeRuntimeMain'

export class CodeRuntimeExecutor {
  /**
   * @param {{ timeout?: number, signal?: AbortSignal, runtime?: object, config?: object }} [options]
   *   `timeout`: each run's elapsed deadline (default 60000 ms, as Cloudflare's Worker executor);
   *   `signal`: aborting it ends every run in flight and every later one
   */
  constructor(options = {}) {
    this.timeout = options.timeout ?? 60000
    this.signal = options.signal
    this.runtime = new AdapterRuntime(options, 'code-runtime-native/cloudflare')
  }

  /**
   * @param {string} code an async arrow function (the framework's tools normalise the model's
   *   code to one before they call an executor)
   * @param {object[] | Record<string, Function>} providersOrFns namespaces (`{ name, fns,
   *   prelude? }`), or the bare functions of the default `codemode` namespace
   */
  async execute(code, providersOrFns, options) {
    try {
      if (options?.connectors?.length > 0) {
        return failed(
          'connectors are Workers RPC bindings, which this executor cannot call outside Cloudflare Workers: ' +
            'pass their tools as a provider ({ name, fns }) instead',
        )
      }
      const providers = Array.isArray(providersOrFns) ? providersOrFns : [{ name: 'codemode', fns: providersOrFns ?? {} }]
      const namespaces = []
      for (const provider of providers) {
        const problem = providerProblem(provider, namespaces)
        if (problem !== undefined) return failed(problem)
        const tools = providerTools(provider)
        if (typeof tools === 'string') return failed(tools)
        namespaces.push({ name: provider.name, tools, missing: 'Tool "{name}" not found' })
      }
      const { prelude, binding } = buildBridge({ namespaces, levels: LEVELS })
      // The function is made before the providers' preludes run and called after them. The
      // code starts on line 1, so its positions are its own; it passes through a call, so V8
      // names no frame after the adapter's variable.
      const head = `${prelude}const ${MAIN}=((f)=>f)((`
      const body = String(code).trim().replace(/;+$/, '')
      const preludes = providers.map((provider) => (typeof provider.prelude === 'string' ? `${provider.prelude}\n;` : '')).join('')
      const program = `${head}${body}\n));\n${preludes}return await ${MAIN}();`
      const result = await this.runtime.run({ program, bindings: [binding], signal: this.signal, timeoutMs: this.timeout })
      const frame = { prelude: head.length, lastLine: body.split('\n').length }
      const logs = result.logs.map((entry) => ownPositions(entry, frame))
      if (result.error === undefined) return { result: result.value, logs }
      return { result: undefined, error: errorText(describeFailure(result.error, frame)), logs }
    } catch (error) {
      return failed(error?.message ?? String(error))
    }
  }

  /** Ends the runtime this executor started (runs in flight end as `AbortError`). */
  dispose() {
    return this.runtime.dispose()
  }
}

function failed(error) {
  return { result: undefined, error, logs: [] }
}

/** Cloudflare's executors' checks of a provider's name, in their words. */
function providerProblem(provider, earlier) {
  const name = provider?.name
  if (typeof name !== 'string' || !isCallableName(name)) {
    return `Provider name ${JSON.stringify(String(name))} is not a valid JavaScript identifier`
  }
  if (ownedNameProblem(name) !== undefined) return `Provider name ${JSON.stringify(name)} is reserved`
  if (earlier.some((namespace) => namespace.name === name)) return `Duplicate provider name ${JSON.stringify(name)}`
  if (provider.fns === null || typeof provider.fns !== 'object') {
    return `Provider ${JSON.stringify(name)} has no fns object: pass { name, fns: { tool: async (...args) => value } }`
  }
  return undefined
}

/** The provider's tools under their sanitised names, or the message of a collision. */
function providerTools(provider) {
  const seen = new Map()
  const tools = []
  for (const [original, fn] of Object.entries(provider.fns)) {
    const name = sanitizeToolName(original)
    const earlier = seen.get(name)
    if (earlier !== undefined) {
      return `Tool names ${JSON.stringify(earlier)} and ${JSON.stringify(original)} both sanitize to ${JSON.stringify(name)} in provider ${JSON.stringify(provider.name)}`
    }
    seen.set(name, original)
    tools.push({ name, label: original, call: (args) => fn(...args) })
  }
  return tools
}

/**
 * Cloudflare's tool-name rule, which its executors and its type generator share: `-`, `.` and
 * whitespace become `_`, any other character outside `[A-Za-z0-9_$]` is dropped, a leading digit
 * gets a `_` before it, a reserved word a `_` after it, and nothing left is `_`.
 */
export function sanitizeToolName(name) {
  let safe = String(name).replace(/[-.\s]/g, '_').replace(/[^A-Za-z0-9_$]/g, '')
  if (safe === '') return '_'
  if (/^[0-9]/.test(safe)) safe = `_${safe}`
  if (JS_RESERVED_WORDS.has(safe)) safe = `${safe}_`
  return safe
}

/**
 * The error string: what the program threw as V8 prints it (name, message, the program's
 * frames), or the runtime's failure under its kind's name (`TimeoutError: compute budget ...`).
 */
function errorText(failure) {
  if (failure.kind === 'exception') return failure.stack ?? failure.message
  return `${failure.name}: ${failure.message}`
}
