// IsolateCodeRuntime: each run in a fresh V8 isolate on a thread of its own (docs/typescript.md).
// This file is the host side: the config, the sandbox pool, and the adapter
// that starts a native run and hands its events to the shared session (lib/session.mjs). The
// isolate itself is Rust (src/isolate).
import os from 'node:os'
import Schema from 'schemastery'
import { RUN_AS_SCHEMA, readRunAs } from './run-as.mjs'
import native from './native.mjs'
import { durableOptions } from './durable.mjs'
import { DEFAULT_MAX_PENDING_CALLS, PREFIX, renderReason, renderRejection, unboundRunError, validatePendingCalls } from './request.mjs'
import { inspectSandboxHelper, sandboxHelperError } from './sandbox-helper.mjs'
import { afterResult, disposeSessions, runDurableSession, runSession, sessionState } from './session.mjs'
import { fitsBesideLogs } from './stop-clause.mjs'
import { unshadowed } from './unshadowed.mjs'
import { TRACING_SCHEMA, readTracing } from './tracing.mjs'

// The console in the isolate formats as this Node major's util.inspect does (src/isolate/js/console/README.md).
const NODE_MAJOR = Number(process.versions.node.split('.')[0])

const JSONParse = JSON.parse

/** Config keys in validation order (docs/typescript.md#config). */
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
  if (config.containment !== undefined && config.containment !== 'process' && config.containment !== 'thread') {
    throw new Error(`${PREFIX}config.containment must be 'process' or 'thread', got ${String(config.containment)}`)
  }
  validatePendingCalls(config.maxPendingCalls)
  for (const key of ['maxProcesses', 'maxRunsPerProcess']) {
    const value = config[key]
    if (!(Number.isSafeInteger(value) && value >= 1 && value <= 4096)) {
      throw new Error(`${PREFIX}config.${key} must be an integer from 1 to 4096, got ${String(value)}`)
    }
  }
  if (typeof config.allowUnsandboxed !== 'boolean') {
    throw new Error(`${PREFIX}config.allowUnsandboxed must be true or false, got ${String(config.allowUnsandboxed)}`)
  }
  if (config.maxWallMs > MAX_TIMER_MS) {
    throw new Error(
      `${PREFIX}config.maxWallMs must be at most 2147483647 (Node clamps a longer setTimeout delay to 1ms), got ${config.maxWallMs}`,
    )
  }
}

export const IsolateConfig = Schema.object({
  computeMs: Schema.number().default(60000)
    .description('Compute budget in ms: CPU time of the thread that runs the isolate.'),
  maxWallMs: Schema.number().default(600000)
    .description('Wall-clock ceiling in ms, from the start of the run; it never pauses.'),
  maxOutputBytes: Schema.number().default(67108864)
    .description('Combined byte budget of logs, value and failure message (compact JSON, UTF-8).'),
  maxOldGenerationSizeMb: Schema.number().default(512)
    .description('Heap cap of each isolate in MiB; ArrayBuffer memory is capped at the same size.'),
  maxPendingCalls: Schema.number().default(DEFAULT_MAX_PENDING_CALLS)
    .description('Binding calls a run may have in flight at once; one more ends the run (protocol on ctx.ptcRuntime, worker-exit on ctx.codeRuntime).'),
  containment: Schema.union(['process', 'thread'])
    .description("Where isolates run: supervised sandbox processes ('process', the default on Linux) or host threads ('thread')."),
  maxProcesses: Schema.number()
    .description('Sandbox processes at most; runs beyond wait in FIFO order. Default cores + 1.'),
  maxRunsPerProcess: Schema.number()
    .description('Runs one sandbox process serves before it is replaced. Default 1: a compromised process never sees another run; above 1 only for trusted workloads.'),
  runAs: RUN_AS_SCHEMA,
  allowUnsandboxed: Schema.boolean().default(false)
    .description("Load even when the sandbox helper this platform ships is missing or unusable: isolates then run on host threads, as with containment 'thread'."),
  ...TRACING_SCHEMA,
})

/**
 * The containment in effect. `'thread'` needs no helper; otherwise, where the platform ships one
 * (Linux), a missing or unusable helper is a load-time error, unless the config names no
 * containment and allows running unsandboxed (then `'thread'`, which `sandbox` reports).
 */
function chooseContainment(requested, allowUnsandboxed) {
  if (requested === 'thread') return 'thread'
  const helper = inspectSandboxHelper()
  if (helper === undefined) return requested ?? 'thread'
  if (helper.problem === undefined) return 'process'
  if (requested === undefined && allowUnsandboxed) return 'thread'
  throw sandboxHelperError(helper, requested === 'process' ? EXPLICIT_PROCESS : ISOLATES_WITHOUT_HELPER)
}

/** The load-time error's words for this backend (lib/sandbox-helper.mjs). */
const ISOLATES_WITHOUT_HELPER = {
  consequence: 'isolates cannot run in sandbox processes',
  optOut:
    "To run them on the host's threads on purpose, set `containment: 'thread'`, or `allowUnsandboxed: true` to do so only while the helper is unusable.",
}
const EXPLICIT_PROCESS = {
  consequence: "containment 'process' cannot start sandbox processes",
  optOut: "To run isolates on the host's threads instead, set `containment: 'thread'`.",
}
const THREAD_SANDBOX = Object.freeze({
  process: false,
  helper: false,
  namespaces: false,
  landlock: 0,
  seccomp: false,
  seccompAllowlist: false,
  processCap: false,
  memoryCgroup: false,
  privateRoot: false,
})

/** The sandbox processes of a `'process'` runtime; the spare starts now, off any run's path. */
function startPool(config) {
  try {
    return new native.IsolatePool({
      maxOldGenerationSizeMb: config.maxOldGenerationSizeMb,
      maxOutputBytes: config.maxOutputBytes,
      maxProcesses: config.maxProcesses,
      maxRunsPerProcess: config.maxRunsPerProcess,
      runAs: config.runAs,
    })
  } catch (error) {
    throw new Error(`${PREFIX}${error?.message ?? String(error)}`)
  }
}

/**
 * The state of one isolate runtime: its config validated (throws so `ctx.plugin` rejects), the
 * sandbox pool started where the config asks for it, and dispose registered on `ctx`. Both
 * seams' classes keep one (lib/ptc/ builds the `ctx.ptcRuntime` classes on it).
 */
export function createIsolateState(ctx, config = {}) {
  const resolved = {
    computeMs: config?.computeMs ?? 60000,
    maxWallMs: config?.maxWallMs ?? 600000,
    maxOutputBytes: config?.maxOutputBytes ?? 67108864,
    maxOldGenerationSizeMb: config?.maxOldGenerationSizeMb ?? 512,
    maxPendingCalls: config?.maxPendingCalls ?? DEFAULT_MAX_PENDING_CALLS,
    containment: config?.containment,
    maxProcesses: config?.maxProcesses ?? (os.availableParallelism?.() ?? os.cpus().length) + 1,
    maxRunsPerProcess: config?.maxRunsPerProcess ?? 1,
    runAs: readRunAs(config?.runAs, (message) => {
      throw new Error(`${PREFIX}${message}`)
    }),
    allowUnsandboxed: config?.allowUnsandboxed ?? false,
  }
  validateConfig(resolved)
  const tracing = readTracing(config)
  resolved.containment = chooseContainment(resolved.containment, resolved.allowUnsandboxed)
  // Throws (so ctx.plugin rejects) where the process tier is not available.
  const pool = resolved.containment === 'process' ? startPool(resolved) : undefined
  const state = sessionState({
    tracing,
    config: Object.freeze(resolved),
    pool,
    sandbox: undefined,
    // Runs whose thread was still busy at Done (a supervisor handing its process back, a thread
    // tearing its isolate down).
    unjoined: new Set(),
    // The thread tier's next isolate, prepared on its own thread before the run that takes it;
    // when the last thread-tier run ended, and how long the last spare took to prepare (ms).
    spare: undefined,
    lastEnd: undefined,
    spareMs: undefined,
  })
  if (!pool) prepareSpare(state)
  ctx?.effect?.(() => () => disposeRuns(state))
  return state
}

/**
 * Starts a thread-tier run on the spare's thread when it fits (else on a thread of its own, the
 * spare kept for the next run). The next spare is prepared once this run is over, unless runs
 * come about as fast as one is prepared (the last ended less than twice the last preparation's
 * time before this one arrived): then now, beside this run, so it is ready for the next.
 */
function startOnThread(state, options, onEvent, started) {
  const backToBack = performance.now() - (state.lastEnd ?? -Infinity) < 2 * (state.spareMs ?? 0)
  const spare = state.spare
  state.spare = undefined
  started(native.startIsolateRun(options, onEvent, spare))
  state.spareMs = spare?.prepareMs ?? state.spareMs
  if (spare && !spare.taken) state.spare = spare
  else if (backToBack) prepareSpare(state)
}

/**
 * Prepares the thread tier's next isolate off any run's path (at load, and once a run is over),
 * so a run does not wait for V8 to make one from the snapshot: one per runtime, never used by
 * more than one run (docs/typescript.md#the-thread-tiers-spare).
 */
function prepareSpare(state) {
  if (state.disposed || state.spare) return
  try {
    state.spare = native.prepareIsolateSpare(state.config.maxOldGenerationSizeMb)
  } catch {
    // No thread to spare: each run starts its own, as without a spare.
  }
}

/** The layers around the isolates (measured by the first sandbox process, once). */
export function isolateSandbox(state) {
  if (state.sandbox === undefined) {
    state.sandbox = state.pool ? Object.freeze(state.pool.sandbox()) : THREAD_SANDBOX
  }
  return state.sandbox
}

/**
 * Runs one program (lib/session.mjs). `options` are the seam's additions (`RunOptions`).
 * @param {object} state from `createIsolateState`
 * @param {import('../index.js').CodeRunRequest} request
 */
export function runIsolate(state, request, options) {
  return runSession(ISOLATE, state, request, options)
}

/** `runIsolate` durably (lib/session.mjs `runDurableSession`): `request.journal` resumes. */
export function runIsolateDurable(state, request, options) {
  return runDurableSession(ISOLATE, state, request, options)
}

/** @param {abstract new (ctx: any, name: string) => object} Base */
export function defineIsolateRuntime(Base) {
  class IsolateCodeRuntime extends Base {
    static Config = IsolateConfig

    /** @type {'typescript'} */
    language = 'typescript'
    /** @type {'v8-isolate'} */
    isolation = 'v8-isolate'

    constructor(ctx, config = {}) {
      super(ctx, 'codeRuntime')
      unshadowed(this)
      // cordis hands out services through a Proxy, so state lives in a symbol-keyed property
      // (private fields would not be reachable through the proxy receiver).
      this[STATE] = createIsolateState(ctx, config)
    }

    get containment() {
      return this[STATE].config.containment
    }

    /** The layers around the isolates (measured by the first sandbox process, once). */
    get sandbox() {
      return isolateSandbox(this[STATE])
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
      const state = this?.[STATE]
      if (state === undefined) return Promise.reject(unboundRunError(this))
      return runIsolate(state, request)
    }

    /**
     * Runs one program durably (docs/durable.md): `run()`'s result plus `journal`, or, when a
     * binding threw `suspend(data)`, `suspended` instead of `value`/`error`. A later call with
     * `{ ...request, journal }` replays the journaled calls and goes on from the paused one.
     */
    runDurable(request) {
      const state = this?.[STATE]
      if (state === undefined) return Promise.reject(unboundRunError(this))
      return runIsolateDurable(state, request)
    }
  }
  return IsolateCodeRuntime
}

const STATE = Symbol('code-runtime-native.isolate')

/** How the isolate backend differs from the Python one (lib/session.mjs). */
const ISOLATE = {
  dialect: 'isolate',
  members: 'live',
  program: (program) => String(program),
  abortMessage: renderReason,
  numberText: undefined,
  messageCap: (state) => state.config.maxOutputBytes,
  failureFits: (state, logs, message) => fitsBesideLogs(logs, message, state.config.maxOutputBytes),
  failedBeforeStart: (state, kind, message) =>
    report(native.isolateFreshFailure(kind, message, state.config.maxOutputBytes)),
  startErrorMessage: renderRejection,
  start: startIsolate,
  // What runDurable() asks once per runtime: the time zone and locale programs see.
  zoneProbe: 'const o = Intl.DateTimeFormat().resolvedOptions(); return `${o.timeZone} ${o.locale}`',
}

/** Log entries built per turn of the event loop when a report has many (src/boundary/logs.rs). */
const LOG_SLICE = 32768

/**
 * Calls `then` with the report and its log entries as an array. A report with many entries
 * carries an `IsolateLogs`: its entries are taken a slice per turn of the event loop, so a run
 * that printed millions of one-byte entries never holds the loop for long.
 */
function withLogs(payload, then) {
  const logs = payload.logs
  if (Array.isArray(logs)) return then(payload)
  let all
  const step = () => {
    let more
    try {
      more = logs.take(all, LOG_SLICE)
    } catch (error) {
      // A bug of this layer still settles the run.
      const message = `${PREFIX}internal error: the run's logs could not be built (${renderRejection(error)})`
      return then({ logs: [], error: { kind: 'worker-exit', message }, stats: payload.stats })
    }
    if (more) setImmediate(step)
    else then({ ...payload, logs: all })
  }
  // The array (8 bytes a slot, zeroed: 16 MiB for two million entries) is made in a turn of its
  // own, not in the one that delivered the report.
  setImmediate(() => {
    all = new Array(logs.length)
    setImmediate(step)
  })
}

/** A native report in the session's terms (the value crosses as JSON text). */
function report({ logs, value, error, stats }) {
  return value === undefined ? { logs, error, stats } : { logs, value: JSONParse(value), stats }
}

function startIsolate(state, plan, session) {
  const options = {
    program: plan.program,
    namespaces: plan.namespaces.map(({ global, names, errorClass }) => ({
      global,
      names,
      errorClassName: errorClass?.name,
      memberNameProperty: errorClass?.memberNameProperty,
    })),
    computeMs: state.config.computeMs,
    maxWallMs: plan.maxWallMs ?? state.config.maxWallMs,
    maxOutputBytes: state.config.maxOutputBytes,
    maxPendingCalls: state.config.maxPendingCalls,
    maxOldGenerationSizeMb: state.config.maxOldGenerationSizeMb,
    streamLogs: plan.streamLogs,
    nodeMajor: NODE_MAJOR,
  }
  Object.assign(options, durableOptions(session.ending.durable?.journal))
  let run
  const onEvent = session.events(() => run, {
    done(payload) {
      joinLater(state, run)
      withLogs(payload, (whole) => {
        session.settle(report(whole))
        // The next spare once the result is built (its isolate never adds to the peak of a
        // report with many entries, built a slice per turn) and has reached its caller.
        if (!state.pool) {
          state.lastEnd = performance.now()
          afterResult(state, () => prepareSpare(state))
        }
      })
    },
  })
  if (state.pool) run = native.startContainedIsolateRun(state.pool, options, onEvent)
  else startOnThread(state, options, onEvent, (started) => (run = started))
  // The program is in the tier's hands now (a sandbox process parses it, or the run's thread).
  plan.started?.()
  return run
}

/**
 * Dispose to quiescence (docs/seam.md#disposal): end every live run, then wait until their threads
 * exited.
 */
async function disposeRuns(state) {
  await disposeSessions(state)
  // Every sandbox process killed and reaped, and every supervisor thread joined, before dispose
  // resolves.
  state.pool?.close()
  state.spare?.dispose()
  state.spare = undefined
  for (const run of state.unjoined) run.join(true)
  state.unjoined.clear()
}

/**
 * Joins the runs' threads that have finished (a thread-tier run's tears its isolate down after
 * Done, a contained run's supervisor hands its process back); keeps the others for later.
 */
function joinLater(state, run) {
  for (const earlier of state.unjoined) if (earlier.join(false)) state.unjoined.delete(earlier)
  if (!run.join(false)) state.unjoined.add(run)
}

