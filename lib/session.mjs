// One run of either backend in the seam's order (docs/seam.md), written once: the disposal check,
// reading and validating the bindings, the program, the signal and observers, a pre-aborted
// signal, binding dispatch, abort, settling once (stats, observers, the result's exact shape) and
// dispose to quiescence. The backends (isolate-runtime.mjs, python-runtime.mjs) are adapters that
// start their native run and translate its events; what they must do differently is the
// `Backend` below, in one place.
import { AsyncResource } from 'node:async_hooks'
import { CallLog, NO_CALLS } from './call-log.mjs'
import { losslessJson } from './lossless.mjs'
import native from './native.mjs'
import { stopClause } from './stop-clause.mjs'
import { Journal, checkZone, divergenceMessage, isSuspension, readJournal, sameJson } from './durable.mjs'
import {
  PREFIX, UNRENDERABLE, afterDisposalError, readNamespaces, renderRejection, validateNamespaces,
} from './request.mjs'
import {
  bindingChannel, endCallSpan, endRunSpan, runChannel, startCallSpan, startRunSpan, withCallContext,
} from './tracing.mjs'

/** The abort message of every run in flight when its runtime is disposed. */
export const DISPOSED = native.DISPOSED

/**
 * How each seam spells the native failure kinds. The native layer marks a child that broke the
 * channel protocol as `protocol` (src/outcome.rs); `ctx.codeRuntime` has six kinds, and there
 * such a run is one of its `worker-exit`s, with the same message.
 */
export const CODE_SEAM = Object.freeze({
  // `sandbox-unavailable` needs a file policy, which only the ptc seam's runs have.
  kind: (kind) => (kind === 'protocol' || kind === 'sandbox-unavailable' ? 'worker-exit' : kind),
  message: (kind, message) => message,
})

/** The native text of a run past its elapsed deadline (src/outcome.rs `wall_clock_message`). */
const WALL_CLOCK = /^wall-clock ceiling reached \((.+)ms\)$/

/**
 * `ctx.ptcRuntime` (lib/ptc/): every native kind as it is, and its own `sandbox-unavailable`. A
 * run past its spec's deadline says so in the host's own words (docs/seam.md#the-deadlines-text):
 * the seam calls it the execution's deadline, not a ceiling of the runtime's config.
 */
export const PTC_SEAM = Object.freeze({
  kind: (kind) => kind,
  message(kind, message) {
    const wall = kind === 'timeout' ? WALL_CLOCK.exec(message) : null
    return wall === null ? message : `execution deadline reached (${wall[1]}ms)`
  },
})

const nextTick = process.nextTick
const ObjectHasOwn = Object.hasOwn
const ObjectKeys = Object.keys
const JSONStringify = JSON.stringify
const JSONParse = JSON.parse
const EVENT = native.RunEventKind

/**
 * @typedef {object} Backend What differs between the backends, and only that.
 * @property {'isolate' | 'python'} dialect the binding-name rules (src/seam/validate.rs)
 * @property {'live' | 'snapshot'} members `live`: a call looks its function up when it is made
 *   (the names are fixed at run start); `snapshot`: the callable own members are copied at run
 *   start and later changes to `functions` are not seen
 * @property {(program: unknown) => string} program the program text (or a throw for misuse)
 * @property {(reason: unknown) => string} abortMessage an abort's message from the signal's reason
 * @property {((n: number) => string) | undefined} numberText how a resolution's numbers are
 *   written (Python: integers past 2^53 keep their digits, for its ints)
 * @property {(state: object) => number} messageCap how long a failed call's message may be when
 *   it crosses (longer ones are cut: they could never be shown)
 * @property {(state: object, logs: string[], message: string) => boolean} failureFits whether a
 *   failure message this long fits beside the run's logs (a timeout's clause is added only then)
 * @property {(state: object, kind: string, message: string) => Report} failedBeforeStart the
 *   report of a run that ended before its native run existed (a pre-aborted signal, a failed start)
 * @property {(error: unknown) => string} startErrorMessage the `worker-exit` message of a start
 *   that threw
 * @property {(state: object, plan: Plan, session: Session) => Handle} start starts the native
 *   run; its events go to `session`
 *
 * @typedef {{ logs: string[], value?: unknown, error?: { kind: string, message: string }, stats?: object }} Report
 * @typedef {{ abort(message: string, kind?: string): void }} Handle
 * @typedef {{ program: string, namespaces: Namespace[], streamLogs: boolean, maxWallMs?: number, filePolicy?: object }} Plan
 *   `maxWallMs` and `filePolicy` are the run's own (the ptc seam's resolved spec); absent, the
 *   runtime's config decides
 * @typedef {object} RunOptions What the seam adds to a request.
 * @property {typeof CODE_SEAM} [seam] how the result spells the kinds (default `CODE_SEAM`)
 * @property {number} [maxWallMs] this run's wall ceiling instead of the config's
 * @property {object} [filePolicy] the file plan a Python run is given (lib/ptc/file-plan.mjs)
 * @property {() => void} [started] called once the run is in its tier's hands (Python: the
 *   `spawned` event; an isolate: its native run exists), so the seam can tell a run that ran from
 *   one refused before it started
 * @property {number} [maxMessageBytes] the largest binding call's arguments or reply, in bytes of
 *   JSON, and the cap of the arguments of the calls in flight together; past it the run ends as
 *   `protocol`, as the host's own backend ends it (lib/ptc/settings.mjs)
 * @property {{ kind: string, message: string }} [refuse] the run cannot start: once the request
 *   is validated, it resolves with this failure and nothing runs
 * @typedef {{ global: string, errorClass?: { name: string, memberNameProperty: string }, names: string[], qualified: string[], call: (index: number, arg: unknown) => unknown }} Namespace
 */

/**
 * The state every runtime keeps for its runs (the adapter adds its own fields); `tracing` is the
 * config's tracer, read by `readTracing` (lib/tracing.mjs); `afterResult` what waits for the last
 * result to reach its caller (`afterResult`).
 */
export function sessionState(fields) {
  return { disposed: false, live: new Set(), lastStats: undefined, tracing: undefined, afterResult: undefined, ...fields }
}

/** The language each dialect's programs are written in, as traces name it. */
const LANGUAGE = Object.freeze({ isolate: 'typescript', python: 'python' })

/**
 * Runs `work` (the next run's spare) once the result that just settled has reached its caller:
 * after the turn of the event loop that runs its continuation, so the work never delays it. A
 * run that starts sooner (from that continuation) runs it first (`Session.start`).
 */
export function afterResult(state, work) {
  state.afterResult?.()
  const now = () => {
    clearImmediate(immediate)
    state.afterResult = undefined
    work()
  }
  const immediate = setImmediate(now)
  state.afterResult = now
}

/**
 * `run(request)` for `backend`. Resolves with the seam's result; rejects only on misuse. Traced
 * on the `code-runtime-native:run` channel while it has subscribers.
 */
export function runSession(backend, state, request, options = {}) {
  if (!runChannel.hasSubscribers) return startRun(backend, state, request, options, undefined)
  const trace = { language: LANGUAGE[backend.dialect], request }
  return runChannel.tracePromise(startRun, trace, undefined, backend, state, request, options, trace)
}

/**
 * `runDurable(request)` for `backend` (lib/durable.mjs, docs/durable.md): `run()` with its binding
 * calls journaled and replayed from `request.journal`. A malformed journal rejects before anything
 * runs.
 */
export async function runDurableSession(backend, state, request, options = {}) {
  const journal = new Journal(readJournal(request?.journal))
  const zone = await programZone(backend, state)
  checkZone(journal, zone)
  journal.zone ??= zone
  // Answers reach the program in call order (docs/durable.md#determinism): `next` is the call
  // whose answer goes next, `held` the answers that came before theirs could.
  const delivery = { next: 1, held: new Map() }
  return runSession(backend, state, request, { ...options, durable: { journal, suspension: undefined, inFlight: 0, delivery } })
}

/**
 * The time zone and locale this runtime's programs see, asked of a program once per runtime
 * (`backend.zoneProbe`); `undefined` when the backend has no probe or the probe failed.
 */
function programZone(backend, state) {
  if (backend.zoneProbe === undefined) return undefined
  state.programZone ??= startRun(backend, state, { program: backend.zoneProbe, bindings: [] }, { probe: true }, undefined).then(
    (result) => (typeof result.value === 'string' ? result.value : undefined),
    () => undefined,
  )
  return state.programZone
}

async function startRun(backend, state, request, options, trace) {
  const seam = options.seam ?? CODE_SEAM
  if (state.disposed) throw afterDisposalError()
  const declared = readNamespaces(request.bindings)
  validateNamespaces(declared, backend.dialect)
  const namespaces = declared.map(backend.members === 'live' ? liveMembers : snapshotMembers)
  const program = backend.program(request.program)
  const signal = request.signal ?? undefined
  const onLog = typeof request.onLog === 'function' ? request.onLog : undefined
  const ending = {
    onStats: typeof request.onStats === 'function' ? request.onStats : undefined,
    seam,
    trace,
    // The zone probe (runDurable's first) is the runtime's own business: no span.
    runSpan: options.probe ? undefined : startRunSpan(state.tracing, LANGUAGE[backend.dialect]),
    calls: undefined,
    backend,
    durable: options.durable,
  }
  if (options.refuse !== undefined) {
    const { kind, message } = options.refuse
    return finish(state, backend.failedBeforeStart(state, kind, message), ending)
  }
  const preAborted = abortedMessage(backend, signal)
  if (preAborted !== undefined) return finish(state, backend.failedBeforeStart(state, 'abort', preAborted), ending)
  const plan = { program, namespaces, streamLogs: onLog !== undefined }
  if (options.maxWallMs !== undefined) plan.maxWallMs = options.maxWallMs
  if (options.filePolicy !== undefined) plan.filePolicy = options.filePolicy
  if (options.started !== undefined) plan.started = options.started
  return new Promise((resolve) => {
    const session = new Session(backend, state, namespaces, signal, onLog, ending, resolve)
    session.messageCap = options.maxMessageBytes
    session.start(plan)
  })
}

/** Ends every live run as `abort` / `runtime disposed` and waits until each has settled. */
export async function disposeSessions(state) {
  state.disposed = true
  const live = [...state.live]
  for (const session of live) session.abort(DISPOSED)
  await Promise.all(live.map((session) => session.finished))
}

function liveMembers({ global, functions, errorClass, callNames }) {
  const names = ObjectKeys(functions)
  const call = (index, arg) => {
    const name = names[index]
    // A getter on `functions` that throws fails this call, as the function itself would.
    const fn = ObjectHasOwn(functions, name) ? functions[name] : undefined
    if (typeof fn !== 'function') throw new BindingMissing(`unknown binding ${JSONStringify(`${global}.${name}`)}`)
    return fn(arg)
  }
  return { global, errorClass, names, qualified: qualify(global, names, callNames), call }
}

function snapshotMembers({ global, functions, errorClass, callNames }) {
  const names = []
  const fns = []
  for (const name of ObjectKeys(functions)) {
    const fn = functions[name]
    if (typeof fn === 'function') {
      names.push(name)
      fns.push(fn)
    }
  }
  return { global, errorClass, names, qualified: qualify(global, names, callNames), call: (index, arg) => fns[index](arg) }
}

/**
 * Each member's name in `stats.calls` and traces: `'<global>.<name>'`, or the name the package's
 * own namespace gave it (`CALL_NAMES`, lib/request.mjs).
 */
function qualify(global, names, callNames) {
  const own = (name) => (callNames !== undefined && ObjectHasOwn(callNames, name) ? callNames[name] : undefined)
  return names.map((name) => (typeof own(name) === 'string' ? own(name) : `${global}.${name}`))
}

/** Whether a rejection is a `BindingMissing`, asked without running a trap of the host's value. */
function isBindingMissing(error) {
  try {
    return error instanceof BindingMissing
  } catch {
    return false
  }
}

/** A call of a name that is no longer an own function: its message is the whole failure. */
class BindingMissing {
  constructor(message) {
    this.message = message
  }
}

/** One run in flight: what its native events do, and how it ends. */
class Session {
  constructor(backend, state, namespaces, signal, onLog, ending, resolve) {
    this.backend = backend
    this.state = state
    this.namespaces = namespaces
    this.signal = signal
    this.onLog = onLog
    // How the run's end is reported (`finish`); its calls are recorded here as they come.
    this.ending = ending
    this.calls = new CallLog()
    ending.calls = this.calls
    // The spans of the calls the host has not answered yet (ended as abandoned with the run).
    this.openSpans = new Set()
    // The async context `run()` was called in: the host's functions run in it (their
    // AsyncLocalStorage stores are the caller's), not in that of the native event that asked.
    this.scope = new AsyncResource('code-runtime-native:run')
    this.resolve = resolve
    this.handle = undefined
    this.settled = false
    // Set once the run's signal fired or its runtime is disposing: no settlement reaches it.
    this.aborted = false
    this.finished = new Promise((done) => (this.done = done))
    this.onAbort = () => this.abort(reasonMessage(backend, signal))
    // `RunOptions.maxMessageBytes`, and the bytes of arguments of the calls in flight.
    this.messageCap = undefined
    this.pendingBytes = 0
    // Log entries streamed so far (a resumed durable run skips those it printed before).
    this.logged = 0
  }

  start(plan) {
    // What waited for the last result to reach its caller (the next spare) is this run's now.
    this.state.afterResult?.()
    try {
      this.handle = this.backend.start(this.state, plan, this)
    } catch (error) {
      this.settle(this.backend.failedBeforeStart(this.state, 'worker-exit', this.backend.startErrorMessage(error)))
      return
    }
    this.state.live.add(this)
    listen(this.signal, this.onAbort)
  }

  abort(message) {
    this.aborted = true
    this.handle?.abort(message)
  }

  /**
   * Whether the run is being aborted: its abort was requested, or its signal reads as fired (a
   * signal that could not be listened to is acted on here).
   */
  aborting() {
    if (this.aborted) return true
    const message = abortedMessage(this.backend, this.signal)
    if (message !== undefined) this.abort(message)
    return this.aborted
  }

  /**
   * Runs an event handler of the adapter. A handler that throws is a bug of this layer: the run
   * fails with it (as `worker-exit`) instead of hanging until a budget ends it.
   */
  guard(handler) {
    try {
      handler()
    } catch (error) {
      if (!this.settled) this.handle?.abort(`${PREFIX}internal error: ${renderRejection(error)}`, 'worker-exit')
    }
  }

  /**
   * The native run's `onEvent(kind, id, ns, name, payload)` (src/boundary/events.rs), one
   * protocol for both backends: binding calls and logs are handled here, `on.done(report)` ends
   * the run, `on.spawned()` and `on.barrier()` are Python's. `run()` gives the native run, which
   * exists before its first event arrives.
   */
  events(run, on) {
    return (kind, id, ns, name, payload) => this.guard(() => {
      if (kind === EVENT.Call) this.call(ns, name, payload, (ok, json) => run().reply(id, ok, json))
      else if (kind === EVENT.Logs) for (const text of payload) this.log(text)
      else if (kind === EVENT.Done) on.done(payload)
      else if (kind === EVENT.Spawned) on.spawned()
      else if (kind === EVENT.Barrier) on.barrier()
    })
  }

  /**
   * A binding call: `reply(ok, json)` gets the resolution's lossless JSON, or the failure
   * message's JSON. Nothing about a host value escapes as an unhandled rejection.
   *
   * Abort wins: a settlement goes out only once the current tick's microtasks have run, and only
   * if the run is not being aborted by then. A host that cancels settles the pending call in the
   * same tick as it aborts the signal, in either order; the program must see the abort, never
   * that settlement.
   */
  call(ns, index, payload, reply) {
    const namespace = this.namespaces[ns]
    const name = namespace.qualified[index]
    const argBytes = byteLength(payload)
    const record = this.calls.open(name, argBytes)
    const seq = this.calls.count
    // A call the program made after its abort never reaches the host.
    if (this.aborted) return
    const durable = this.ending.durable
    if (durable !== undefined) {
      // Paused: the run ends once the calls already with the host have settled.
      if (durable.suspension !== undefined) return
      reply = inCallOrder(durable.delivery, seq, reply)
      const entry = durable.journal.replay(seq)
      if (entry !== undefined) return this.replay(seq, name, JSONParse(payload), entry, record, reply)
    }
    let held = this.admit(argBytes)
    if (held === undefined) return
    const span = this.ending.runSpan === undefined ? undefined : startCallSpan(this.ending.runSpan, seq, name, payload)
    if (span !== undefined) this.openSpans.add(span)
    // The program is answered: the call's record and span say how.
    const answer = (ok, json, failure, bytes = byteLength(json)) => {
      this.calls.answered(record, ok, bytes)
      if (span !== undefined) {
        this.openSpans.delete(span)
        endCallSpan(span, ok ? 'resolved' : 'rejected', ok ? json : undefined, failure)
      }
      reply(ok, json)
    }
    const release = () => {
      this.pendingBytes -= held
      held = 0
    }
    const capped = (message) => {
      const cap = this.backend.messageCap(this.state)
      return message.length > cap ? message.slice(0, cap) : message
    }
    const fail = (message, type) => {
      if (this.settled) return
      this.calls.settled(record)
      release()
      const text = capped(message)
      if (durable !== undefined && this.journaled(seq, name, arg, false, text)) return
      nextTick(() => {
        if (!this.settled && !this.aborting()) answer(false, JSONStringify(text), { type, message: text })
      })
    }
    // A resolution is encoded as its reply goes out, not as it settles: calls answered in one
    // tick (a burst) would otherwise each hold their reply's JSON until the tick ends, long enough
    // for V8 to move it to the old generation, where garbage waits for a full collection.
    const resolve = (value) => {
      if (this.settled) return
      this.calls.settled(record)
      release()
      if (durable !== undefined) {
        // Journaled as the host settled it, whether or not the program is answered.
        const json = losslessJson(value, this.backend.numberText)
        const ok = json !== undefined
        if (this.journaled(seq, name, arg, ok, ok ? JSONParse(json) : capped('binding resolution must be lossless JSON'))) return
      }
      nextTick(() => this.guard(() => {
        if (this.settled || this.aborting()) return
        const json = losslessJson(value, this.backend.numberText)
        if (json === undefined) {
          const text = capped('binding resolution must be lossless JSON')
          answer(false, JSONStringify(text), { type: 'invalid-output', message: text })
        }
        else {
          const bytes = byteLength(json)
          if (this.messageCap !== undefined && bytes > this.messageCap) this.overflow(`a binding's reply is ${bytes} bytes of JSON`)
          else answer(true, json, undefined, bytes)
        }
      }))
    }
    const arg = JSONParse(payload)
    if (durable !== undefined) durable.inFlight++
    // The host's function's own promise, once called (a throwing tracer must not lose it).
    let invoked
    const host = () => (invoked = (async () => namespace.call(index, arg))())
    // Traced on `code-runtime-native:binding` while it has subscribers.
    const traced = bindingChannel.hasSubscribers
      ? () => bindingChannel.tracePromise(host, { seq, name, arguments: arg, run: this.ending.trace })
      : host
    let settles
    try {
      settles = this.scope.runInAsyncScope(withCallContext, undefined, span, traced)
    } catch (error) {
      // A tracer's context manager threw: the host's function runs outside its span's context,
      // once (had it run already, its own promise is the call's).
      settles = invoked ?? this.scope.runInAsyncScope(traced)
    }
    settles
      .then(resolve, (error) => {
        if (durable !== undefined && isSuspension(error)) this.suspend(seq, name, arg, error.data)
        else if (isBindingMissing(error)) fail(error.message, 'unknown-binding')
        else fail(renderRejection(error), span === undefined ? undefined : errorType(error))
      })
      .catch((error) => {
        try {
          fail(renderRejection(error), '_OTHER')
        } catch {}
      })
  }

  /**
   * A durable run's call `seq` the journal answers: the same call as the journal's at that number,
   * answered as the host answered it then (never calling the host), or the run ends: it diverged.
   */
  replay(seq, name, arg, entry, record, reply) {
    if (entry.name !== name || !sameJson(entry.args, arg)) {
      this.handle?.abort(divergenceMessage(seq, entry, name, arg), 'exception')
      return
    }
    const json = entry.ok ? losslessJson(entry.value, this.backend.numberText) : JSONStringify(entry.message)
    this.calls.settled(record)
    nextTick(() => {
      if (this.settled || this.aborting()) return
      this.calls.answered(record, entry.ok, byteLength(json))
      reply(entry.ok, json)
    })
  }

  /**
   * A durable run's call settled with the host: journaled. True when the run is pausing, so the
   * program is not answered (the run ends once no call is with the host).
   */
  journaled(seq, name, arg, ok, valueOrMessage) {
    const durable = this.ending.durable
    const kept = durable.journal.record(seq, name, arg, ok, valueOrMessage)
    durable.inFlight--
    if (!kept) {
      // The journal is the host's memory too: an attempt never grows it past its cap.
      if (!this.settled) this.handle?.abort(Journal.fullMessage(seq), 'protocol')
      return true
    }
    if (durable.suspension === undefined) return false
    this.endPaused()
    return true
  }

  /** A binding paused the durable run at call `seq` (the first pause wins). */
  suspend(seq, name, arg, data) {
    const durable = this.ending.durable
    durable.inFlight--
    if (durable.suspension === undefined) durable.suspension = Object.freeze({ seq, name, args: arg, data })
    this.endPaused()
  }

  /** Ends a paused run once every call the host was running has settled and been journaled. */
  endPaused() {
    const durable = this.ending.durable
    if (!this.settled && durable.inFlight === 0) this.handle?.abort(`${PREFIX}the run paused at call #${durable.suspension.seq}`, 'abort')
  }

  /**
   * The bytes a call's arguments hold against `messageCap` (0 without one), or undefined when
   * they are past it, alone or with the calls in flight: the run is then ended.
   */
  admit(bytes) {
    if (this.messageCap === undefined) return 0
    if (bytes > this.messageCap) {
      this.overflow(`a binding call's arguments are ${bytes} bytes of JSON`)
      return undefined
    }
    this.pendingBytes += bytes
    if (this.pendingBytes > this.messageCap) {
      this.overflow(`the binding calls in flight carry ${this.pendingBytes} bytes of arguments`)
      return undefined
    }
    return bytes
  }

  /** Ends the run as `protocol`: a message past `messageCap`, as the host's backend ends it. */
  overflow(what) {
    if (this.settled) return
    this.handle?.abort(
      `${PREFIX}${what}, more than maxMessageBytes (${this.messageCap}); the run was ended. Pass less per call, or raise maxMessageBytes in the runtime's config`,
      'protocol',
    )
  }

  /** A log entry the ledger admitted, for `onLog` (an observer never changes the result). */
  log(text) {
    // On a resumed durable run the entries the paused attempt printed were shown already.
    const durable = this.ending.durable
    if (durable !== undefined && this.logged++ < durable.journal.logs.length) return
    callQuietly(this.onLog, text)
  }

  /** The run is over: `report` is its result and stats. */
  settle(report) {
    if (this.settled) return
    this.settled = true
    unlisten(this.signal, this.onAbort)
    this.state.live.delete(this)
    for (const span of this.openSpans) endCallSpan(span, 'abandoned', undefined, undefined)
    this.openSpans.clear()
    this.resolve(finish(this.state, report, this.ending))
    this.done()
  }
}

/** The name of what a host's function threw, for a span's `error.type` (never a host's getter's throw). */
function errorType(error) {
  try {
    const name = error?.name
    return typeof name === 'string' && name.length > 0 && name.length <= 128 ? name : '_OTHER'
  } catch {
    return '_OTHER'
  }
}

const BufferByteLength = Buffer.byteLength

/** UTF-8 bytes of a JSON text. */
function byteLength(text) {
  return BufferByteLength(text, 'utf8')
}

/**
 * Records the stats (with the run's calls), tells the observer, ends the run's traces, and gives
 * the result exactly the seam's shape.
 */
function finish(state, report, { onStats, seam, trace, runSpan, calls, backend, durable }) {
  let stats
  if (report.stats !== undefined) {
    // One frozen object for the observer and lastRunStats(): neither can change the other's.
    const records = calls === undefined ? NO_CALLS : calls.snapshot()
    stats = { ...report.stats, calls: records, callCount: calls?.count ?? 0 }
    if (stats.stoppedAt !== undefined) stats.stoppedAt = Object.freeze({ ...stats.stoppedAt })
    Object.freeze(stats)
    state.lastStats = stats
    callQuietly(onStats, stats)
  }
  const result = { logs: report.logs }
  if (report.error !== undefined) {
    const { kind, message } = report.error
    let text = seam.message(kind, message)
    // A budget's end says where and on what (docs/tracing.md#the-timeouts-clause), when it fits.
    if (kind === 'timeout' && stats !== undefined) {
      const clause = stopClause(LANGUAGE[backend.dialect], stats)
      if (clause !== '' && backend.failureFits(state, report.logs, text + clause)) text += clause
    }
    result.error = { kind: seam.kind(kind), message: text }
  }
  else if (ObjectHasOwn(report, 'value')) result.value = report.value
  if (durable !== undefined) {
    // The attempt's journal, and where it paused instead of how it ended (docs/durable.md).
    if (durable.suspension !== undefined && result.error?.kind === seam.kind('abort')) {
      delete result.error
      result.suspended = durable.suspension
    }
    const { journal, fits } = durable.journal.kept(result.logs)
    if (!fits) {
      delete result.value
      delete result.suspended
      result.error = { kind: seam.kind('protocol'), message: seam.message('protocol', Journal.logsMessage()) }
    }
    result.journal = journal
  }
  if (trace !== undefined) trace.stats = stats
  if (runSpan !== undefined) endRunSpan(runSpan, stats, result.error)
  return result
}

function callQuietly(fn, arg) {
  if (fn === undefined) return
  try {
    fn(arg)
  } catch {
    // Observers never change the result (docs/seam.md#observers).
  }
}

/**
 * The abort message of a signal that already fired, or `undefined`. A signal is read
 * defensively: it may not be an AbortSignal at all, and any of its getters may throw (the run is
 * then aborted, with the seam's fallback message).
 */
function abortedMessage(backend, signal) {
  if (signal === undefined || signal === null) return undefined
  try {
    if (!signal.aborted) return undefined
  } catch {
    return UNRENDERABLE
  }
  return reasonMessage(backend, signal)
}

function reasonMessage(backend, signal) {
  try {
    return backend.abortMessage(signal.reason)
  } catch {
    return UNRENDERABLE
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

/**
 * `reply` for durable call `seq`, held until every call made before it has been answered: the
 * program sees answers in the order it made the calls, on every attempt, however the tools'
 * timing differed (docs/durable.md#determinism).
 */
function inCallOrder(delivery, seq, reply) {
  return (ok, json) => {
    delivery.held.set(seq, () => reply(ok, json))
    while (delivery.held.has(delivery.next)) {
      const send = delivery.held.get(delivery.next)
      delivery.held.delete(delivery.next)
      delivery.next++
      send()
    }
  }
}
