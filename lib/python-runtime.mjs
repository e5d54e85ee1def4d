// PythonCodeRuntime (docs/python.md): each run is a fresh `python3 -u -I` subprocess driven
// over fd 3 by the Rust host (src/python). This layer owns the config and its load-time checks,
// the spare child, and the adapter that starts a native run and hands its events to the shared
// session (lib/session.mjs).
import os from 'node:os'
import v8 from 'node:v8'
import { fileURLToPath } from 'node:url'
import Schema from 'schemastery'
import { RUN_AS_SCHEMA, readRunAs } from './run-as.mjs'
import native from './native.mjs'
import { DEFAULT_MAX_PENDING_CALLS, PREFIX, renderRejection, unboundRunError, validatePendingCalls } from './request.mjs'
import { durableOptions } from './durable.mjs'
import { exactDigits } from './lossless.mjs'
import { unshadowed } from './unshadowed.mjs'
import { inspectSandboxHelper, sandboxHelperError } from './sandbox-helper.mjs'
import { afterResult, disposeSessions, runDurableSession, runSession, sessionState } from './session.mjs'
import { TRACING_SCHEMA, readTracing } from './tracing.mjs'

/** Where the bootstrap scripts ship inside the package. */
export const PY_DIR = fileURLToPath(new URL('../py/', import.meta.url))

const PROTOCOL_FRAME_CAP = 67108864
const FRAME_ENVELOPE = 64
const MIN_LOG_BYTES = 64
const INTERPRETER_BASELINE = 67108864
const UNICODE_EXPANSION = 12
const MAX_TIMER = 2147483647
const CLOSE_SLACK = 2000
const NUMERIC_KEYS = ['cpuSeconds', 'maxWallMs', 'addressSpaceMb', 'maxLogBytes', 'maxValueBytes', 'graceMs']

/**
 * The fd-3 parse cap: lowered when the host heap could not hold a worst-shape frame
 * (docs/python.md#load-time-validation, step 8).
 */
export function pythonFrameCap(heapSizeLimit = v8.getHeapStatistics().heap_size_limit) {
  return Math.min(PROTOCOL_FRAME_CAP, Math.floor((heapSizeLimit - PROTOCOL_FRAME_CAP) / 16))
}

const fail = (message) => {
  throw new Error(`${PREFIX}${message}`)
}

/**
 * Load-time validation in the documented order (docs/python.md#load-time-validation, steps 1–9).
 * Throws the exact message.
 * @returns {number} the frame cap
 */
export function validatePythonConfig(config, platform = process.platform, heapSizeLimit) {
  if (platform === 'win32') {
    fail('this backend requires a Unix platform (POSIX rlimits, fd-3 stdio, process-group signals); it cannot run on Windows')
  }
  for (const key of NUMERIC_KEYS) {
    const v = config[key]
    if (!Number.isFinite(v) || v <= 0) fail(`config.${key} must be a positive number, got ${String(v)}`)
  }
  const { cpuSeconds, maxWallMs, addressSpaceMb, graceMs, pythonBin } = config
  if (!Number.isInteger(cpuSeconds)) fail(`config.cpuSeconds must be a positive integer, got ${cpuSeconds}`)
  if (!Number.isSafeInteger(cpuSeconds + 1)) {
    fail(`config.cpuSeconds must be at most 9007199254740990 (it and its +1 hard limit cross to setrlimit as exact integers), got ${cpuSeconds}`)
  }
  const addressSpaceBytes = addressSpaceMb * 1048576
  if (!Number.isSafeInteger(addressSpaceBytes)) {
    fail(`config.addressSpaceMb must be at most 8589934591 (its byte count crosses the wire as an exact integer), got ${addressSpaceMb}`)
  }
  if (typeof pythonBin !== 'string' || pythonBin === '' || pythonBin.includes('\0')) {
    fail(`config.pythonBin must be a non-empty path without NUL bytes, got ${JSON.stringify(pythonBin)}`)
  }
  if (maxWallMs > MAX_TIMER) {
    fail(`config.maxWallMs must not exceed ${MAX_TIMER} (setTimeout clamps a larger delay to 1ms), got ${maxWallMs}`)
  }
  if (graceMs + CLOSE_SLACK > MAX_TIMER) {
    fail(`config.graceMs must not exceed ${MAX_TIMER - CLOSE_SLACK} (its close deadline adds ${CLOSE_SLACK}ms, and setTimeout clamps a larger delay to 1ms), got ${graceMs}`)
  }
  validatePendingCalls(config.maxPendingCalls)
  const cap = pythonFrameCap(heapSizeLimit)
  const limit = cap - FRAME_ENVELOPE
  const heapClause = cap < PROTOCOL_FRAME_CAP
    ? ` — this host's heap limits the parse to ${cap} bytes, so the protocol cap of ${PROTOCOL_FRAME_CAP} would be unsafe`
    : ''
  for (const key of ['maxLogBytes', 'maxValueBytes']) {
    const v = config[key]
    if (!Number.isInteger(v)) {
      fail(`config.${key} must be a positive integer (the child reads it as an int, so a float diverges from the host), got ${v}`)
    }
    if (v > limit) {
      fail(`config.${key} must not exceed ${limit} (a payload that large cannot cross the fd-3 frame PARSER, which rejects raw frames past ${cap} bytes before decoding to bound host memory${heapClause} — a larger budget would admit a config whose honest child frames the host then rejects as a worker-exit), got ${v}`)
    }
    if (key === 'maxLogBytes' && v < MIN_LOG_BYTES) {
      fail(`config.maxLogBytes must be at least ${MIN_LOG_BYTES} (a smaller budget cannot serialize the truncation marker itself, so a marker-only truncated run would return more than the configured cap), got ${v}`)
    }
  }
  const budgetable = addressSpaceBytes - INTERPRETER_BASELINE
  if (budgetable <= 0) {
    fail(`config.addressSpaceMb must exceed the ${INTERPRETER_BASELINE}-byte interpreter baseline with room for the output budgets, so the child has address space left to build and encode them; got ${addressSpaceMb} MiB (${addressSpaceBytes} bytes)`)
  }
  for (const key of ['maxLogBytes', 'maxValueBytes']) {
    const v = config[key]
    if (v * UNICODE_EXPANSION >= budgetable) {
      fail(`config.${key} times the ${UNICODE_EXPANSION}x worst-case Unicode expansion must fit within the ${budgetable} bytes left after the ${INTERPRETER_BASELINE}-byte interpreter baseline within the ${addressSpaceBytes}-byte addressSpaceMb, so a near-budget output truncates rather than breaching RLIMIT_AS as worker-exit; got ${v} against a limit of ${Math.ceil(budgetable / UNICODE_EXPANSION) - 1}`)
    }
  }
  return cap
}

const STATE = Symbol('code-runtime-native.python')

/** The load-time error's words for this backend (lib/sandbox-helper.mjs). */
const PYTHON_WITHOUT_HELPER = {
  consequence: 'Python programs would run without the sandbox (no namespaces, Landlock, seccomp or process cap)',
  optOut: 'To run them without it on purpose, set `allowUnsandboxed: true` in the runtime\'s config.',
}
const PYTHON_STILL_USES_IT = {
  consequence: 'every Python run would fail: the addon starts each child through that file, which `allowUnsandboxed` cannot change',
  optOut: 'To run without the sandbox on purpose, remove that file and keep `allowUnsandboxed: true`.',
}

/** Live runs of every runtime in this realm: if the process exits under them, their groups die too. */
const liveRuns = new Set()
/** Runtime states holding spare children, killed the same way. */
const liveSpares = new Set()
let exitHooked = false
function trackForExit(run) {
  if (!exitHooked) {
    exitHooked = true
    process.once('exit', () => {
      for (const run of liveRuns) run.kill()
      for (const state of liveSpares) {
        for (const spares of spareQueues(state)) for (const spare of spares) spare.dispose()
        for (const spare of state.released ?? []) spare.dispose()
        state.template?.dispose()
      }
    })
  }
  liveRuns.add(run)
}

/** The load-time config schema (the `ctx.ptcRuntime` class extends it, lib/ptc/). */
export const PythonConfig = Schema.object({
  cpuSeconds: Schema.number().default(60).description('RLIMIT_CPU soft limit in seconds (hard = soft + 1).'),
  maxWallMs: Schema.number().default(600000).description('Wall-clock ceiling per run, boot included.'),
  addressSpaceMb: Schema.number().default(512).description('RLIMIT_AS in MiB (not applied on macOS).'),
  maxLogBytes: Schema.number().default(65536).description('Log byte budget shared by every log channel.'),
  maxValueBytes: Schema.number().default(32768).description('Byte budget of the completion value; also caps error messages.'),
  graceMs: Schema.number().default(3000).description('Delay between SIGTERM and SIGKILL.'),
  maxPendingCalls: Schema.number().default(DEFAULT_MAX_PENDING_CALLS)
    .description('Binding calls a run may have in flight at once; one more ends the run (protocol on ctx.ptcRuntime, worker-exit on ctx.codeRuntime).'),
  pythonBin: Schema.string().default('python3').description('Absolute path, relative path, or a basename looked up on PATH.'),
  runAs: RUN_AS_SCHEMA,
  allowUnsandboxed: Schema.boolean().default(false)
    .description('Load even when the sandbox helper this platform ships is missing or unusable; children then run without its layers (`sandbox` says which hold).'),
  ...TRACING_SCHEMA,
})

/**
 * Everything a Python runtime checks and measures before it exists: the config (with
 * `PythonConfig`'s defaults), the interpreter probe, the child's modules compiled, the sandbox
 * layers. Throws the exact message on the first failure, so a class can call it before
 * `super()` and nothing registers.
 */
export function preparePythonState(config) {
  const resolved = PythonConfig(config ?? {})
  const frameCap = validatePythonConfig(resolved)
  const runAs = readRunAs(resolved.runAs, fail)
  const tracing = readTracing(resolved)
  const helper = inspectSandboxHelper()
  if (helper?.problem && !resolved.allowUnsandboxed) throw sandboxHelperError(helper, PYTHON_WITHOUT_HELPER)
  // Allowed to run without it, but the native side starts children through any executable
  // file there (one that does not start, or that this user may not run): every run would fail.
  if (helper?.problem && native.sandboxHelperInUse() === helper.path) throw sandboxHelperError(helper, PYTHON_STILL_USES_IT)
  const load = native.pythonLoadInterpreter(resolved.pythonBin, process.env.PATH, process.cwd(), os.tmpdir())
  if (load.error != null) fail(load.error)
  // Compile the child's modules once with that interpreter, so runs skip it (best effort).
  const pycache = native.pythonPrecompile(load.interpreter.executable, os.tmpdir())
  const { executable, prefixes } = load.interpreter
  // What a sandboxed child may read of the interpreter's installation.
  const interpreterPaths = Object.freeze([...prefixes, executable])
  // One child spawned as runs are shows which kernel layers hold on this machine.
  const sandbox = native.pythonSandboxLayers(executable, interpreterPaths, os.tmpdir(), runAs)
  return sessionState({
    tracing,
    template: startTemplate(sandbox, executable, runAs),
    config: Object.freeze({ ...resolved, runAs }),
    frameCap,
    interpreter: Object.freeze({
      resolved: load.interpreter.resolved,
      executable,
      version: load.interpreter.version,
    }),
    interpreterPaths,
    ownRoot: ownRoot(sandbox, interpreterPaths),
    sandbox: Object.freeze({ process: true, ...sandbox }),
    pycache,
  })
}

/**
 * What a run's own root holds of the host's beside a policy's trees: the system's, the
 * interpreter's, and the staging directories (`undefined` when runs see the host's tree).
 */
function ownRoot(sandbox, interpreterPaths) {
  if (!(sandbox.namespaces && sandbox.privateRoot)) return undefined
  const { system, stagingPrefix } = native.pythonRootHolds(os.tmpdir())
  return Object.freeze({ trees: Object.freeze([...system, ...interpreterPaths]), stagingPrefix })
}

/**
 * The runtime's template (docs/python.md#the-template): an interpreter that has imported what
 * runs need and forks each run's child into the same layers a spawned one takes. Only behind
 * the sandbox helper; without one, or when it does not start, each run starts its own.
 */
function startTemplate(sandbox, executable, runAs) {
  if (!sandbox.helper) return undefined
  try {
    return native.pythonStartTemplate(executable, os.tmpdir(), runAs, sandbox.namespaces && sandbox.privateRoot)
  } catch {
    return undefined
  }
}

/** Kills what a prepared state holds (its template) when no runtime came of it. */
export function disposePythonState(state) {
  state.template?.dispose()
}

/** Registers dispose on `ctx` once the service exists. */
export function attachPythonState(ctx, state) {
  ctx.effect(() => () => disposeRuns(state))
}

/**
 * Runs one program (lib/session.mjs). `options` are the seam's additions (`RunOptions`).
 * @param {object} state from `preparePythonState`
 */
/**
 * The boot frame's `namespaces` (src/channel/table's Namespace and ErrorClass; the fd-3 test
 * holds this to them): each namespace's own keys only, `errorClass` absent when it declares none.
 */
export function bootNamespaces(namespaces) {
  return namespaces.map(({ global, names, errorClass }) =>
    errorClass ? { global, names, errorClass: { name: errorClass.name, memberNameProperty: errorClass.memberNameProperty } } : { global, names },
  )
}

export function runPython(state, request, options) {
  return runSession(PYTHON, state, request, options)
}

/** `runPython` durably (lib/session.mjs `runDurableSession`): `request.journal` resumes. */
export function runPythonDurable(state, request, options) {
  return runDurableSession(PYTHON, state, request, options)
}

export function definePythonRuntime(Base) {
  class PythonCodeRuntime extends Base {
    static Config = PythonConfig

    constructor(ctx, config) {
      const state = preparePythonState(config)
      try {
        super(ctx, 'codeRuntime')
      } catch (error) {
        disposePythonState(state)
        throw error
      }
      unshadowed(this)
      this[STATE] = state
      attachPythonState(ctx, state)
    }

    get language() {
      return 'python'
    }

    get isolation() {
      return 'process'
    }

    /** The interpreter resolved at load: `{ resolved, executable, version }`. */
    get interpreter() {
      return this[STATE].interpreter
    }

    /**
     * The kernel layers around each child, as measured at load: `{ process, helper, namespaces,
     * landlock, seccomp, processCap, privateRoot, uid }` (`landlock` is the enforced ABI, 0 when
     * absent; `uid` the child's uid outside its namespaces, absent without the helper).
     */
    get sandbox() {
      return this[STATE].sandbox
    }

    /** `{ cpuMs, wallMs, maxRssBytes? }` of the last settled run, if any. */
    lastRunStats() {
      return this[STATE].lastStats
    }

    /** @param {{ program: string, bindings: Iterable<object>, signal?: AbortSignal, onLog?: (text: string) => void, onStats?: (stats: object) => void }} request */
    run(request) {
      const state = this?.[STATE]
      if (state === undefined) return Promise.reject(unboundRunError(this))
      return runPython(state, request)
    }

    /**
     * Runs one program durably (docs/durable.md): `run()`'s result plus `journal`, or, when a
     * binding threw `suspend(data)`, `suspended` instead of `value`/`error`. A later call with
     * `{ ...request, journal }` replays the journaled calls and goes on from the paused one.
     */
    runDurable(request) {
      const state = this?.[STATE]
      if (state === undefined) return Promise.reject(unboundRunError(this))
      return runPythonDurable(state, request)
    }
  }
  return PythonCodeRuntime
}

/** How the Python backend differs from the isolate one (lib/session.mjs). */
const PYTHON = {
  dialect: 'python',
  members: 'snapshot',
  program: (program) => {
    if (typeof program !== 'string') {
      throw new TypeError(`${PREFIX}request.program must be a string, got ${program === null ? 'null' : typeof program}`)
    }
    return program
  },
  abortMessage: renderRejection,
  numberText: exactDigits,
  // The host (src/python) cuts messages to the value budget itself.
  messageCap: () => Infinity,
  // The host caps a child's messages at this many UTF-8 bytes (docs/budgets-and-ledger.md#message-cap).
  failureFits: (state, logs, message) => Buffer.byteLength(message, 'utf8') <= Math.max(state.config.maxValueBytes, 15),
  failedBeforeStart: (state, kind, message) => ({ logs: [], error: { kind, message } }),
  startErrorMessage: (error) => `python spawn error: ${renderRejection(error)}`,
  start: startPython,
  // What runDurable() asks once per runtime: the time zone and locale programs see.
  zoneProbe: 'import locale, time\nreturn f"{time.tzname[0]}/{time.tzname[1]} {locale.setlocale(locale.LC_CTYPE)}"',
}

/** Dispose to quiescence: the spares are killed, every live run ends as `abort`/`runtime disposed`. */
function disposeRuns(state) {
  clearTimeout(state.trimSpares)
  for (const spares of spareQueues(state)) for (const spare of spares) spare.dispose()
  state.spares = undefined
  state.policySpares = undefined
  // Spares being killed on threads of their own: each returns once that is done.
  for (const spare of state.released ?? []) spare.dispose()
  state.released?.clear()
  state.template?.dispose()
  liveSpares.delete(state)
  return disposeSessions(state)
}

/** A settled event in the session's terms, with `{ cpuMs?, wallMs, maxRssBytes?, stoppedAt? }` stats. */
function report({ logs, value, error, stats: { cpuMs, wallMs, maxRssBytes, stoppedAt } }) {
  const stats = {}
  if (cpuMs != null) stats.cpuMs = cpuMs
  stats.wallMs = wallMs
  if (maxRssBytes != null) stats.maxRssBytes = maxRssBytes
  if (stoppedAt != null) {
    const { line, column, functionName } = stoppedAt
    stats.stoppedAt = functionName == null ? { line, column } : { line, column, functionName }
  }
  if (error != null) return { logs, error, stats }
  return value == null ? { logs, stats } : { logs, value: JSON.parse(value), stats }
}

function startPython(state, plan, session) {
  const { config, frameCap, pycache } = state
  // Judged as the run arrives: taking a spare still booting below waits for it.
  const backToBack = runsBackToBack(state)
  state.lastStart = performance.now()
  let run
  const handle = {
    abort: (message, kind) => run.abort(message, kind),
    kill: () => run.kill(),
  }
  const onEvent = session.events(() => run, {
    done(payload) {
      liveRuns.delete(handle)
      session.settle(report(payload))
      state.lastEnd = performance.now()
      afterResult(state, () => {
        prepareSpare(state, plan.filePolicy, backToBack ? BACK_TO_BACK_SPARES : 1)
        trimSparesWhenIdle(state)
      })
    },
    spawned: () => {
      plan.started?.()
      if (backToBack) prepareSpare(state, plan.filePolicy, BACK_TO_BACK_SPARES)
    },
    // The host's call-backlog barrier: answered (id -1) once every call dispatched before it
    // has run its microtasks, so bindings that settle at once are no longer in flight.
    barrier: () => setImmediate(() => run.reply(-1, true, '')),
  })
  const spare = takeSpare(state, plan)
  run = native.pythonStartRun(
    {
      ...childOptions(state),
      maxLogBytes: config.maxLogBytes,
      maxValueBytes: config.maxValueBytes,
      maxWallMs: plan.maxWallMs ?? config.maxWallMs,
      graceMs: config.graceMs,
      frameCap,
      maxPendingCalls: config.maxPendingCalls,
      namespacesJson: JSON.stringify(bootNamespaces(plan.namespaces)),
      dispatch: plan.namespaces.map(({ global, names }) => [global, ...names]),
      program: plan.program,
      streamLogs: plan.streamLogs,
      // The file plan of a ptc run (lib/ptc/file-plan.mjs), for the native file policy to enforce.
      ...(plan.filePolicy === undefined ? {} : { filePolicy: plan.filePolicy }),
      ...durableOptions(session.ending.durable?.journal),
    },
    pycache,
    spare,
    state.template,
    onEvent,
  )
  // The run waited for a spare still booting: its boot time is known now.
  state.spareBootMs = spare?.bootMs ?? state.spareBootMs
  trackForExit(handle)
  return handle
}

/**
 * The spare booted for a run like this one, if any (the run checks it still fits). A run without
 * a file policy takes the spare without one; a run under a policy takes the spare booted for the
 * same policy (the last one a run had), and leaves the other for the next run without: taken, it
 * would be killed on this run's path (the caller's thread waits for its namespaces to go).
 */
function takeSpare(state, plan) {
  if (plan.filePolicy === undefined) return state.spares?.shift()
  const held = state.policySpares
  return held?.key === policyKey(plan.filePolicy) ? held.spares.shift() : undefined
}

/** Every queue of spares held: the one for runs without a policy, the one for the last policy. */
function spareQueues(state) {
  return [state.spares, state.policySpares?.spares].filter((spares) => spares !== undefined)
}

/**
 * The queue a spare for runs under `filePolicy` (or none) joins. Hosts keep one workspace and mode
 * for many runs: spares are held for the policy the last run had, and those booted for another
 * are killed off this thread.
 */
function queueFor(state, filePolicy) {
  if (filePolicy === undefined) return (state.spares ??= [])
  const key = policyKey(filePolicy)
  if (state.policySpares?.key !== key) {
    for (const spare of state.policySpares?.spares ?? []) release(state, spare)
    state.policySpares = { key, spares: [] }
  }
  return state.policySpares.spares
}

/** A file policy's identity for the spare that may serve it (`filePolicy` is plain data). */
function policyKey(filePolicy) {
  return JSON.stringify(filePolicy)
}

/**
 * Whether runs come about as fast as a spare boots (the last one ended less than twice the last
 * spare's boot time before this one started; twice, since a spare booting beside other work takes
 * longer): the next run's spare then boots beside this run, as one started at its end would not
 * be ready in time. Otherwise it boots once this run's result is out, so its fork, namespaces and
 * cgroup joins never compete with a run for the CPU (docs/python.md#spares).
 */
function runsBackToBack(state) {
  return performance.now() - (state.lastEnd ?? -Infinity) < 2 * (state.spareBootMs ?? 0)
}

/**
 * How many spares without a policy are held while runs come back to back: the next run takes
 * one that is ready while the one after it boots beside both (docs/python.md#spares).
 */
const BACK_TO_BACK_SPARES = 2
/** A pause this long ends runs in a row: the spares past one are killed (the idle cost is one). */
const TRIM_SPARES_AFTER_MS = 250

/**
 * Boots a child for a next run now, off the critical path (docs/python.md#spares), unless
 * `depth` are held (booting or ready) for runs like it (`queueFor`): it waits for its boot frame
 * inside its namespaces and limits, used by no program until then. One at a time, so two boots
 * never compete. A policy's paths are opened as the helper opens them now and again when a run
 * takes the spare, so a path that something else has taken over since refuses the run as it
 * would without a spare.
 */
function prepareSpare(state, filePolicy, depth = 1) {
  if (state.disposed) return
  const spares = queueFor(state, filePolicy)
  // Concurrent runs each reach this once their child is up: the depth bounds them all.
  if (spares.length >= depth) return
  const options = filePolicy === undefined ? childOptions(state) : { ...childOptions(state), filePolicy }
  try {
    spares.push(native.pythonPrepareSpare(options, state.pycache, state.template))
  } catch {
    // A child the addon refuses to start refuses its run too: that run starts its own and says why.
    return
  }
  liveSpares.add(state)
}

/**
 * Once no run has started for `TRIM_SPARES_AFTER_MS`, kills every spare past the oldest one, with
 * a policy and without.
 */
function trimSparesWhenIdle(state) {
  clearTimeout(state.trimSpares)
  if (!spareQueues(state).some((spares) => spares.length > 1)) return
  state.trimSpares = setTimeout(() => {
    if (state.disposed || performance.now() - state.lastStart < TRIM_SPARES_AFTER_MS) return
    for (const spares of spareQueues(state)) for (const spare of spares.splice(1)) release(state, spare)
  }, TRIM_SPARES_AFTER_MS)
  state.trimSpares.unref?.()
}

/** Kills `spare` off this thread; dispose waits for it (`state.released`, pruned of those gone). */
function release(state, spare) {
  state.released ??= new Set()
  for (const done of [...state.released].filter((s) => s.gone)) state.released.delete(done)
  state.released.add(spare)
  spare.release()
}

/** How a child starts, the same for a run and for the spare that may serve it. */
function childOptions({ config, interpreter, interpreterPaths }) {
  return {
    executable: interpreter.executable,
    interpreterPaths,
    tmpdir: os.tmpdir(),
    cpuSeconds: config.cpuSeconds,
    addressSpaceBytes: config.addressSpaceMb * 1048576,
    runAs: config.runAs,
  }
}
