// PythonCodeRuntime (spec python-runtime.md): each run is a fresh `python3 -u -I` subprocess driven
// over fd 3 by the Rust host (src/python). This layer owns the config and its load-time checks, the
// binding snapshot, binding dispatch on Node's main thread, abort/dispose, and the result shape.
import os from 'node:os'
import v8 from 'node:v8'
import { fileURLToPath } from 'node:url'
import Schema from 'schemastery'
import native from './native.mjs'
import { PREFIX, afterDisposalError, readNamespaces, renderRejection, validateNamespaces } from './request.mjs'
import { exactDigits, losslessJson } from './lossless.mjs'

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

/** The fd-3 parse cap: lowered when the host heap could not hold a worst-shape frame (§3 step 8). */
export function pythonFrameCap(heapSizeLimit = v8.getHeapStatistics().heap_size_limit) {
  return Math.min(PROTOCOL_FRAME_CAP, Math.floor((heapSizeLimit - PROTOCOL_FRAME_CAP) / 16))
}

const fail = (message) => {
  throw new Error(`${PREFIX}${message}`)
}

/**
 * Load-time validation in the spec's order (§3 steps 1–9). Throws the exact message.
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

/** Copies each namespace's callable own enumerable members, reading every field exactly once. */
function snapshot(namespaces) {
  return namespaces.map(({ global, functions, errorClass }) => {
    const names = []
    const fns = []
    for (const name of Object.keys(functions)) {
      const fn = functions[name]
      if (typeof fn === 'function') {
        names.push(name)
        fns.push(fn)
      }
    }
    return { global, errorClass, names, fns }
  })
}

const STATE = Symbol('code-runtime-native.python')

/** Live runs of every runtime in this realm: if the process exits under them, their groups die too. */
const liveRuns = new Set()
/** Runtime states holding a spare child, killed the same way. */
const liveSpares = new Set()
let exitHooked = false
function trackForExit(run) {
  if (!exitHooked) {
    exitHooked = true
    process.once('exit', () => {
      for (const r of liveRuns) r.handle?.kill()
      for (const state of liveSpares) state.spare?.dispose()
    })
  }
  liveRuns.add(run)
}

export function definePythonRuntime(Base) {
  class PythonCodeRuntime extends Base {
    static Config = Schema.object({
      cpuSeconds: Schema.number().default(60).description('RLIMIT_CPU soft limit in seconds (hard = soft + 1).'),
      maxWallMs: Schema.number().default(600000).description('Wall-clock ceiling per run, boot included.'),
      addressSpaceMb: Schema.number().default(512).description('RLIMIT_AS in MiB (not applied on macOS).'),
      maxLogBytes: Schema.number().default(65536).description('Log byte budget shared by every log channel.'),
      maxValueBytes: Schema.number().default(32768).description('Byte budget of the completion value; also caps error messages.'),
      graceMs: Schema.number().default(3000).description('Delay between SIGTERM and SIGKILL.'),
      pythonBin: Schema.string().default('python3').description('Absolute path, relative path, or a basename looked up on PATH.'),
    })

    constructor(ctx, config) {
      const resolved = PythonCodeRuntime.Config(config ?? {})
      const frameCap = validatePythonConfig(resolved)
      const load = native.pythonLoadInterpreter(resolved.pythonBin, process.env.PATH, process.cwd(), os.tmpdir())
      if (load.error != null) fail(load.error)
      // Compile the child's modules once with that interpreter, so runs skip it (best effort).
      const pycache = native.pythonPrecompile(load.interpreter.executable, os.tmpdir())
      const { executable, prefixes } = load.interpreter
      // What a sandboxed child may read of the interpreter's installation.
      const interpreterPaths = Object.freeze([...prefixes, executable])
      // One child spawned as runs are shows which kernel layers hold on this machine.
      const sandbox = native.pythonSandboxLayers(executable, interpreterPaths, os.tmpdir())
      super(ctx, 'codeRuntime')
      const state = {
        config: Object.freeze({ ...resolved }),
        frameCap,
        interpreter: Object.freeze({
          resolved: load.interpreter.resolved,
          executable,
          version: load.interpreter.version,
        }),
        interpreterPaths,
        sandbox: Object.freeze({ process: true, ...sandbox }),
        pycache,
        disposed: false,
        live: new Set(),
        lastStats: undefined,
      }
      this[STATE] = state
      ctx.effect(() => () => disposeRuns(state))
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
     * landlock, seccomp, processCap }` (`landlock` is the enforced ABI, 0 when absent).
     */
    get sandbox() {
      return this[STATE].sandbox
    }

    /** `{ cpuMs, wallMs, maxRssBytes? }` of the last settled run, if any. */
    lastRunStats() {
      return this[STATE].lastStats
    }

    /** @param {{ program: string, bindings: Iterable<object>, signal?: AbortSignal, onLog?: (text: string) => void, onStats?: (stats: object) => void }} request */
    async run(request) {
      const state = this[STATE]
      if (state.disposed) throw afterDisposalError()
      const declared = readNamespaces(request.bindings)
      validateNamespaces(declared, 'python')
      const namespaces = snapshot(declared)
      const program = request.program
      if (typeof program !== 'string') {
        throw new TypeError(`${PREFIX}request.program must be a string, got ${program === null ? 'null' : typeof program}`)
      }
      const signal = request.signal ?? undefined
      const onLog = typeof request.onLog === 'function' ? request.onLog : undefined
      const onStats = typeof request.onStats === 'function' ? request.onStats : undefined
      if (signal?.aborted) {
        return { logs: [], error: { kind: 'abort', message: renderRejection(signal.reason) } }
      }
      return new Promise((resolve) => startRun(state, namespaces, program, signal, onLog, onStats, resolve))
    }
  }
  return PythonCodeRuntime
}

/** Dispose to quiescence: every live run ends as `abort`/`runtime disposed`, then all are awaited. */
function disposeRuns(state) {
  state.disposed = true
  state.spare?.dispose()
  state.spare = undefined
  liveSpares.delete(state)
  const message = JSON.stringify('runtime disposed')
  const finished = []
  for (const run of state.live) {
    run.handle?.abort(message)
    finished.push(run.finished)
  }
  return Promise.all(finished).then(() => {})
}

function startRun(state, namespaces, program, signal, onLog, onStats, resolve) {
  const { config, frameCap, pycache } = state
  const run = { handle: undefined, finished: undefined }
  let settleFinished
  run.finished = new Promise((r) => (settleFinished = r))
  const onAbort = () => {
    let message
    try {
      message = renderRejection(signal.reason)
    } catch {
      message = '<unrenderable rejection value>'
    }
    run.handle?.abort(JSON.stringify(message))
  }

  const settle = (event) => {
    signal?.removeEventListener?.('abort', onAbort)
    state.live.delete(run)
    liveRuns.delete(run)
    const result = { logs: event.logs }
    if (event.error !== undefined) result.error = { kind: event.error.kind, message: event.error.message }
    else if (Object.hasOwn(event, 'value')) result.value = event.value
    const stats = { cpuMs: event.stats.cpuMs, wallMs: event.stats.wallMs }
    if (event.stats.maxRssBytes != null) stats.maxRssBytes = event.stats.maxRssBytes
    if (stats.cpuMs == null) delete stats.cpuMs
    state.lastStats = stats
    if (onStats) {
      try {
        onStats({ ...stats })
      } catch {}
    }
    resolve(result)
    settleFinished()
  }

  const dispatch = (event) => {
    const handle = run.handle
    const reply = (ok, payload) => handle.reply(event.id, ok, payload)
    const rejected = (err) => reply(false, JSON.stringify(renderRejection(err)))
    let pending
    try {
      pending = namespaces[event.ns].fns[event.fn](event.args)
    } catch (err) {
      return rejected(err)
    }
    Promise.resolve(pending).then((value) => {
      const text = losslessJson(value, exactDigits)
      if (text === undefined) reply(false, JSON.stringify('binding resolution must be lossless JSON'))
      else reply(true, text)
    }, rejected).catch(() => {})
  }

  const onEvent = (text) => {
    try {
      const event = JSON.parse(text)
      if (event.type === 'call') dispatch(event)
      // The host's call-backlog barrier: answered (id -1) once every call dispatched before it
      // has run its microtasks, so bindings that settle at once are no longer in flight.
      else if (event.type === 'barrier') setImmediate(() => run.handle.reply(-1, true, ''))
      else if (event.type === 'log') onLog?.(event.text)
      else if (event.type === 'spawned') prepareSpare(state)
      else if (event.type === 'settled') settle(event)
    } catch {}
  }

  const bootNamespaces = namespaces.map(({ global, names, errorClass }) =>
    errorClass ? { global, names, errorClass: { name: errorClass.name, memberNameProperty: errorClass.memberNameProperty } } : { global, names },
  )
  try {
    run.handle = native.pythonStartRun(
      {
        ...childOptions(state),
        maxLogBytes: config.maxLogBytes,
        maxValueBytes: config.maxValueBytes,
        maxWallMs: config.maxWallMs,
        graceMs: config.graceMs,
        frameCap,
        namespacesJson: JSON.stringify(bootNamespaces),
        dispatch: namespaces.map(({ global, names }) => [JSON.stringify(global), ...names.map((n) => JSON.stringify(n))]),
        programJson: JSON.stringify(program),
        streamLogs: onLog !== undefined,
      },
      pycache,
      takeSpare(state),
      onEvent,
    )
  } catch (err) {
    settle({ logs: [], error: { kind: 'worker-exit', message: `python spawn error: ${renderRejection(err)}` }, stats: {} })
    return
  }
  signal?.addEventListener?.('abort', onAbort, { once: true })
  state.live.add(run)
  trackForExit(run)
}

/** The spare booted after the previous run started, if any (the run checks it still fits). */
function takeSpare(state) {
  const spare = state.spare
  state.spare = undefined
  return spare
}

/**
 * Boots the child for the next run now, off the critical path (python-runtime decision 16): it
 * waits for its boot frame inside its namespaces and limits, used by no program until then.
 */
function prepareSpare(state) {
  // One spare at a time: concurrent runs each reach this once their child is up.
  if (state.disposed || state.spare) return
  state.spare = native.pythonPrepareSpare(childOptions(state), state.pycache)
  liveSpares.add(state)
}

/** How a child starts, the same for a run and for the spare that may serve it. */
function childOptions({ config, interpreter, interpreterPaths }) {
  return {
    executable: interpreter.executable,
    interpreterPaths,
    tmpdir: os.tmpdir(),
    cpuSeconds: config.cpuSeconds,
    addressSpaceBytes: config.addressSpaceMb * 1048576,
  }
}
