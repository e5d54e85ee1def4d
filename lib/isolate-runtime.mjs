// IsolateCodeRuntime: each run in a fresh V8 isolate on a thread of its own (spec
// isolate-runtime.md). This file is the host side: config, the run() contract, binding dispatch
// on Node's main thread, abort, dispose and stats. The isolate itself is Rust (src/isolate).
import os from 'node:os'
import Schema from 'schemastery'
import native from './native.mjs'
import { losslessJson } from './lossless.mjs'
import {
  PREFIX, afterDisposalError, readNamespaces, renderReason, renderRejection, validateNamespaces,
} from './request.mjs'

// The console in the isolate formats as this Node major's util.inspect does (js/console/README.md).
const NODE_MAJOR = Number(process.versions.node.split('.')[0])
const EVENT_CALL = 1
const EVENT_LOGS = 2
const EVENT_DONE = 3

const ObjectHasOwn = Object.hasOwn
const ObjectKeys = Object.keys
const JSONParse = JSON.parse
const JSONStringify = JSON.stringify

/** Config keys in validation order (spec §1). */
const POSITIVE_KEYS = ['computeMs', 'maxWallMs', 'maxOutputBytes', 'maxOldGenerationSizeMb']
const MAX_TIMER_MS = 2147483647

/** @param {Record<string, number>} config */
function validateConfig(config) {
  for (const key of POSITIVE_KEYS) {
    const value = config[key]
    if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
      throw new Error(`${PREFIX}config.${key} must be a positive number, got ${String(value)}`)
    }
  }
  if (!Number.isSafeInteger(config.maxOutputBytes) || config.maxOutputBytes < 4) {
    throw new Error(`${PREFIX}config.maxOutputBytes must be a safe integer of at least 4, got ${config.maxOutputBytes}`)
  }
  if (config.containment !== 'process' && config.containment !== 'thread') {
    throw new Error(`${PREFIX}config.containment must be 'process' or 'thread', got ${String(config.containment)}`)
  }
  for (const key of ['maxProcesses', 'maxRunsPerProcess']) {
    const value = config[key]
    if (!(Number.isSafeInteger(value) && value >= 1 && value <= 4096)) {
      throw new Error(`${PREFIX}config.${key} must be an integer from 1 to 4096, got ${String(value)}`)
    }
  }
  if (config.maxWallMs > MAX_TIMER_MS) {
    throw new Error(
      `${PREFIX}config.maxWallMs must be at most 2147483647 (Node clamps a longer setTimeout delay to 1ms), got ${config.maxWallMs}`,
    )
  }
}

const Config = Schema.object({
  computeMs: Schema.number().default(60000)
    .description('Compute budget in ms: CPU time of the thread that runs the isolate.'),
  maxWallMs: Schema.number().default(600000)
    .description('Wall-clock ceiling in ms, from the start of the run; it never pauses.'),
  maxOutputBytes: Schema.number().default(67108864)
    .description('Combined byte budget of logs, value and failure message (compact JSON, UTF-8).'),
  maxOldGenerationSizeMb: Schema.number().default(512)
    .description('Heap cap of each isolate in MiB; ArrayBuffer memory is capped at the same size.'),
  containment: Schema.union(['process', 'thread'])
    .description("Where isolates run: supervised sandbox processes ('process', the default on Linux) or host threads ('thread')."),
  maxProcesses: Schema.number()
    .description('Sandbox processes at most; runs beyond wait in FIFO order. Default max(2, cores).'),
  maxRunsPerProcess: Schema.number()
    .description('Runs one sandbox process serves before it is replaced. Default 100.'),
})

/** The containment a runtime gets when its config names none. */
const DEFAULT_CONTAINMENT = native.containedIsolatesAvailable?.() ? 'process' : 'thread'
const THREAD_SANDBOX = Object.freeze({
  process: false,
  helper: false,
  namespaces: false,
  landlock: 0,
  seccomp: false,
  seccompAllowlist: false,
  processCap: false,
  memoryCgroup: false,
})

/** The sandbox processes of a `'process'` runtime; the spare starts now, off any run's path. */
function startPool(config) {
  try {
    return new native.IsolatePool({
      maxOldGenerationSizeMb: config.maxOldGenerationSizeMb,
      maxOutputBytes: config.maxOutputBytes,
      maxProcesses: config.maxProcesses,
      maxRunsPerProcess: config.maxRunsPerProcess,
    })
  } catch (error) {
    throw new Error(`${PREFIX}${error?.message ?? String(error)}`)
  }
}

/** Turns a native report into the seam's result shape: `{ logs, value? , error? }`. */
function toResult(report) {
  const result = { logs: report.logs }
  if (report.error !== undefined) {
    result.error = { kind: report.error.kind, message: report.error.message }
  } else if (report.value !== undefined) {
    result.value = JSONParse(report.value)
  }
  return result
}

function callQuietly(fn, arg) {
  if (typeof fn !== 'function') return
  try {
    fn(arg)
  } catch {
    // Observers never change the result (spec §12).
  }
}

/** @param {abstract new (ctx: any, name: string) => object} Base */
export function defineIsolateRuntime(Base) {
  class IsolateCodeRuntime extends Base {
    static Config = Config

    /** @type {'typescript'} */
    language = 'typescript'
    /** @type {'v8-isolate'} */
    isolation = 'v8-isolate'

    constructor(ctx, config = {}) {
      super(ctx, 'codeRuntime')
      const resolved = {
        computeMs: config?.computeMs ?? 60000,
        maxWallMs: config?.maxWallMs ?? 600000,
        maxOutputBytes: config?.maxOutputBytes ?? 67108864,
        maxOldGenerationSizeMb: config?.maxOldGenerationSizeMb ?? 512,
        containment: config?.containment ?? DEFAULT_CONTAINMENT,
        maxProcesses: config?.maxProcesses ?? Math.max(2, os.availableParallelism?.() ?? os.cpus().length),
        maxRunsPerProcess: config?.maxRunsPerProcess ?? 100,
      }
      validateConfig(resolved)
      // Throws (so ctx.plugin rejects) where the process tier is not available.
      const pool = resolved.containment === 'process' ? startPool(resolved) : undefined
      // cordis hands out services through a Proxy, so state lives in a symbol-keyed property
      // (private fields would not be reachable through the proxy receiver).
      this[STATE] = {
        config: Object.freeze(resolved),
        pool,
        sandbox: undefined,
        disposed: false,
        live: new Set(),
        // Contained runs whose supervisor thread was still handing its process back at Done.
        unjoined: new Set(),
        lastStats: undefined,
      }
      ctx?.effect?.(() => () => disposeRuns(this[STATE]))
    }

    get containment() {
      return this[STATE].config.containment
    }

    /** The layers around the isolates (measured by the first sandbox process, once). */
    get sandbox() {
      const state = this[STATE]
      if (state.sandbox === undefined) {
        state.sandbox = state.pool ? Object.freeze(state.pool.sandbox()) : THREAD_SANDBOX
      }
      return state.sandbox
    }

    /** The stats of the most recently settled run, or `undefined` before any run. */
    lastRunStats() {
      return this[STATE].lastStats
    }

    /**
     * Runs one program. Resolves with `{ logs, value? , error? }`; rejects only on seam misuse.
     * @param {import('../index.js').CodeRunRequest} request
     */
    run(request) {
      return runIsolate(this[STATE], request)
    }
  }
  return IsolateCodeRuntime
}

const STATE = Symbol('code-runtime-native.isolate')

async function runIsolate(state, request) {
      if (state.disposed) throw afterDisposalError()
      const namespaces = readNamespaces(request.bindings)
      validateNamespaces(namespaces, 'isolate')
      const specs = namespaces.map(({ global, functions, errorClass }) => ({
        global,
        names: ObjectKeys(functions),
        errorClassName: errorClass?.name,
        memberNameProperty: errorClass?.memberNameProperty,
      }))
      const { signal, onLog, onStats } = request
      const cap = state.config.maxOutputBytes
      const preAborted = abortedMessage(signal)
      if (preAborted !== undefined) {
        return finish(state, native.isolateFreshFailure('abort', preAborted, cap), onStats)
      }
      const program = String(request.program)
      return new Promise((resolve) => {
        let run
        let settled = false
        const onAbort = () => run?.abort(reasonMessage(signal))
        const entry = { run: undefined, done: undefined }
        const dispatch = (id, ns, nameIndex, argJson) => {
          const { global, functions } = namespaces[ns]
          const name = specs[ns].names[nameIndex]
          const fail = (message) => {
            if (settled) return
            // A message longer than the whole output budget could never be shown; cut it so the
            // reply always converts (JSON.stringify throws past V8's string length limit).
            const text = message.length > cap ? message.slice(0, cap) : message
            run.reply(id, false, JSONStringify(text))
          }
          let fn
          try {
            fn = ObjectHasOwn(functions, name) ? functions[name] : undefined
          } catch (error) {
            // A getter on `functions` that throws fails this call, as the function itself would.
            fail(renderRejection(error))
            return
          }
          if (typeof fn !== 'function') {
            fail(`unknown binding ${JSONStringify(`${global}.${name}`)}`)
            return
          }
          const arg = JSONParse(argJson)
          const invoke = async () => fn(arg)
          invoke()
            .then(
              (value) => {
                if (settled) return
                const json = losslessJson(value)
                if (json === undefined) fail('binding resolution must be lossless JSON')
                else run.reply(id, true, json)
              },
              (error) => fail(renderRejection(error)),
            )
            .catch((error) => {
              // Nothing about a host value may escape as an unhandled rejection: the call fails.
              try {
                fail(renderRejection(error))
              } catch {}
            })
        }
        const onEvent = (kind, id, ns, name, payload) => {
          try {
            if (kind === EVENT_CALL) dispatch(id, ns, name, payload)
            else if (kind === EVENT_LOGS) {
              if (typeof onLog === 'function') for (const text of payload) callQuietly(onLog, text)
            } else if (kind === EVENT_DONE) {
              settled = true
              if (state.pool) joinLater(state, run)
              else run.join()
              unlisten(signal, onAbort)
              state.live.delete(entry)
              resolve(finish(state, payload, onStats))
            }
          } catch {
            // A host callback must never throw into napi; failures surface as the run's result.
          }
        }
        try {
          const options = {
            program,
            namespaces: specs,
            computeMs: state.config.computeMs,
            maxWallMs: state.config.maxWallMs,
            maxOutputBytes: cap,
            maxOldGenerationSizeMb: state.config.maxOldGenerationSizeMb,
            streamLogs: typeof onLog === 'function',
            nodeMajor: NODE_MAJOR,
          }
          run = state.pool
            ? native.startContainedIsolateRun(state.pool, options, onEvent)
            : native.startIsolateRun(options, onEvent)
        } catch (error) {
          resolve(finish(state, native.isolateFreshFailure('worker-exit', renderRejection(error), cap), onStats))
          return
        }
        entry.run = run
        entry.done = new Promise((done) => {
          const finish = resolve
          resolve = (value) => {
            finish(value)
            done()
          }
        })
        state.live.add(entry)
        listen(signal, onAbort)
      })
    }

/**
 * The abort message of a signal that has already fired, or `undefined`. A signal is read
 * defensively: it may not be an AbortSignal at all, and any of its getters may throw (then the
 * run is treated as aborted, with the seam's fallback message).
 */
function abortedMessage(signal) {
  if (signal === undefined || signal === null) return undefined
  try {
    if (!signal.aborted) return undefined
  } catch {
    return '<unrenderable rejection value>'
  }
  return reasonMessage(signal)
}

/** `String(signal.reason)`, or the seam's fallback when reading or converting it throws. */
function reasonMessage(signal) {
  try {
    return renderReason(signal.reason)
  } catch {
    return '<unrenderable rejection value>'
  }
}

/** Listens for `abort` when the signal can be listened to; a signal that cannot never fires. */
function listen(signal, onAbort) {
  try {
    if (typeof signal?.addEventListener === 'function') signal.addEventListener('abort', onAbort, { once: true })
  } catch {}
}

function unlisten(signal, onAbort) {
  try {
    if (typeof signal?.removeEventListener === 'function') signal.removeEventListener('abort', onAbort)
  } catch {}
}

function finish(state, report, onStats) {
  state.lastStats = report.stats
  callQuietly(onStats, report.stats)
  return toResult(report)
}

/** Dispose to quiescence (seam.md §9): end every live run, then wait until their threads exited. */
async function disposeRuns(state) {
  state.disposed = true
  const live = [...state.live]
  for (const { run } of live) run.abort('runtime disposed')
  await Promise.all(live.map((entry) => entry.done))
  // Every sandbox process killed and reaped, and every supervisor thread joined, before dispose
  // resolves.
  state.pool?.close()
  for (const run of state.unjoined) run.join(true)
  state.unjoined.clear()
}

/** Joins the supervisor threads that have finished; keeps the others for later. */
function joinLater(state, run) {
  for (const earlier of state.unjoined) if (earlier.join(false)) state.unjoined.delete(earlier)
  if (!run.join(false)) state.unjoined.add(run)
}

