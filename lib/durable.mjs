// Durable runs (docs/durable.md): `runDurable(request)` runs a program whose binding calls are
// journaled, so that a call that needs a human's approval can pause the run (`suspend(data)`) and
// a later attempt, hours later, replays the journal instead of calling any tool twice.
//
// The journal is the host's to store and hand back; it is input like any other, checked whole
// before anything runs. Calls are numbered as they reach the host, which is the order the program
// made them (lib/call-log.mjs), so calls started together keep their numbers on every attempt.
// The journal also holds what makes every attempt see the same world (docs/durable.md#determinism):
// the seed its randomness is drawn from, the clock it started at, and the time zone and locale
// its first attempt ran in.

import { randomBytes } from 'node:crypto'
import { losslessJson } from './lossless.mjs'
import { PREFIX } from './request.mjs'

/** The journal's format; a journal of another version is refused. */
export const JOURNAL_VERSION = 2
/**
 * A journal's size at most, in bytes of JSON (its calls' arguments and results, and its logs):
 * refused when read, and an attempt whose journal would grow past it is ended (`protocol`: more
 * held in the host than a run may, as `maxMessageBytes` is).
 */
export const MAX_JOURNAL_BYTES = 64 * 1024 * 1024
/** How much of a call's arguments a divergence message shows. */
const SHOWN_CHARS = 200

const JSONStringify = JSON.stringify
const ObjectKeys = Object.keys
const ObjectFreeze = Object.freeze
const ArrayIsArray = Array.isArray
const SUSPENSION = Symbol('code-runtime-native.suspension')

/**
 * What a binding throws to pause a durable run: `throw suspend({ approvalId })`. `data` (any
 * lossless JSON) comes back in the result's `suspended.data`. Outside `runDurable()` the program
 * sees the call fail.
 */
export class RunSuspension extends Error {
  constructor(data) {
    super(`${PREFIX}suspend() pauses a run only under runDurable(); this run is not durable`)
    this.name = 'RunSuspension'
    this.data = data
    this[SUSPENSION] = true
  }
}

/** `suspend(data)`: the error a binding throws (or rejects with) to pause a durable run. */
export function suspend(data = null) {
  const json = losslessJson(data, undefined)
  if (json === undefined) throw new TypeError(`${PREFIX}suspend(data): data must be lossless JSON (plain objects, arrays, strings, finite numbers, booleans, null)`)
  return new RunSuspension(JSON.parse(json))
}

/** Whether a binding's rejection is a suspension (made by `suspend()`, never a look-alike). */
export function isSuspension(error) {
  try {
    return error instanceof RunSuspension && error[SUSPENSION] === true
  } catch {
    return false
  }
}

const refuse = (what) =>
  new TypeError(`${PREFIX}request.journal ${what}; pass the journal a previous runDurable() returned, unchanged`)

const SEED = /^[0-9a-f]{16}$/
/** Milliseconds either side of the epoch a `Date` can hold. */
const MAX_CLOCK = 8.64e15
/** A time zone and locale's length at most (`Europe/Berlin de-DE`). */
const MAX_ZONE = 200

/**
 * The journal of `request.journal` checked whole: `{ calls: Map<seq, entry>, logs, seed, clock,
 * zone }`, or a TypeError naming what is wrong. An absent journal is an empty one with a new seed,
 * the clock at now and no zone yet (the attempt's own).
 */
export function readJournal(journal) {
  if (journal === undefined || journal === null) {
    const fresh = { calls: new Map(), logs: [], seed: randomBytes(8).toString('hex'), clock: Date.now(), zone: undefined, last: 0 }
    return { ...fresh, bytes: jsonBytes({ version: JOURNAL_VERSION, seed: fresh.seed, clock: fresh.clock, zone: null, calls: [], logs: [] }) }
  }
  let text
  try {
    text = JSONStringify(journal)
  } catch {
    throw refuse('is not JSON')
  }
  if (typeof text !== 'string' || journal === null || typeof journal !== 'object' || ArrayIsArray(journal)) {
    throw refuse('must be an object')
  }
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes > MAX_JOURNAL_BYTES) throw refuse(`is larger than ${MAX_JOURNAL_BYTES} bytes of JSON`)
  // From its own JSON: getters ran once, above; what is checked is what will be used.
  const parsed = JSON.parse(text)
  const keys = ObjectKeys(parsed).sort().join()
  if (keys !== 'calls,clock,logs,seed,version,zone') {
    throw refuse(`must have exactly version, seed, clock, zone, calls and logs (it has ${keys || 'nothing'})`)
  }
  if (parsed.version !== JOURNAL_VERSION) throw refuse(`is version ${JSONStringify(parsed.version)}, not ${JOURNAL_VERSION}`)
  if (typeof parsed.seed !== 'string' || !SEED.test(parsed.seed)) throw refuse('seed must be 16 lowercase hexadecimal digits')
  if (!Number.isSafeInteger(parsed.clock) || Math.abs(parsed.clock) > MAX_CLOCK) throw refuse('clock must be whole milliseconds since the epoch')
  if (parsed.zone !== null && (typeof parsed.zone !== 'string' || parsed.zone.length > MAX_ZONE)) {
    throw refuse(`zone must be null or a time zone and locale (a string of ${MAX_ZONE} characters at most)`)
  }
  if (!ArrayIsArray(parsed.logs) || !parsed.logs.every((entry) => typeof entry === 'string')) throw refuse('logs must be an array of strings')
  if (!ArrayIsArray(parsed.calls)) throw refuse('calls must be an array')
  const calls = new Map()
  let last = 0
  for (const [i, entry] of parsed.calls.entries()) {
    const at = `calls[${i}]`
    if (entry === null || typeof entry !== 'object' || ArrayIsArray(entry)) throw refuse(`${at} must be an object`)
    const ok = entry.ok
    const expected = ok === true ? 'args,name,ok,seq,value' : 'args,message,name,ok,seq'
    if (ObjectKeys(entry).sort().join() !== expected) throw refuse(`${at} must have exactly ${expected.split(',').join(', ')}`)
    if (!Number.isSafeInteger(entry.seq) || entry.seq <= last) throw refuse(`${at}.seq must be an integer above the one before it`)
    if (typeof entry.name !== 'string' || entry.name.length === 0) throw refuse(`${at}.name must be a binding's name`)
    if (ok === false && typeof entry.message !== 'string') throw refuse(`${at}.message must be a string`)
    last = entry.seq
    calls.set(entry.seq, ObjectFreeze(entry))
  }
  return { calls, logs: parsed.logs, seed: parsed.seed, clock: parsed.clock, zone: parsed.zone ?? undefined, last, bytes }
}

const jsonBytes = (value) => Buffer.byteLength(JSONStringify(value), 'utf8')

/**
 * The journal's zone checked against the one this runtime's programs see: an attempt elsewhere
 * would format the same clock differently. A first attempt takes the runtime's.
 */
export function checkZone(journal, zone) {
  if (journal.zone === undefined || zone === undefined || journal.zone === zone) return
  throw new Error(
    `${PREFIX}request.journal was written where programs saw the time zone and locale ${JSONStringify(journal.zone)}; ` +
      `this runtime's programs see ${JSONStringify(zone)}. Resume it on a runtime whose programs see the same ` +
      "(a sandbox process's are always UTC en-US; a host thread's are the host's TZ and LANG)",
  )
}

/** A durable attempt's native options (docs/durable.md#determinism); none for `run()`. */
export function durableOptions(journal) {
  if (journal === undefined) return {}
  return { durable: { seed: journal.seed, clockMs: journal.clock, replayedCalls: journal.replayedCalls } }
}

/** Whether two JSON values are equal, key order aside (a host's store may reorder keys). */
export function sameJson(a, b) {
  const stack = [[a, b]]
  while (stack.length > 0) {
    const [x, y] = stack.pop()
    if (x === y) continue
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false
    if (ArrayIsArray(x) !== ArrayIsArray(y)) return false
    const xs = ObjectKeys(x)
    const ys = ObjectKeys(y)
    if (xs.length !== ys.length) return false
    for (const key of xs) {
      if (!Object.hasOwn(y, key)) return false
      stack.push([x[key], y[key]])
    }
  }
  return true
}

/** A call as a divergence message shows it: `tools.search({"q":"x"})`, its arguments cut. */
export function shownCall(name, args) {
  const json = JSONStringify(args) ?? 'undefined'
  return `${name}(${json.length > SHOWN_CHARS ? `${json.slice(0, SHOWN_CHARS)}…` : json})`
}

/** The message of a call that is not the journal's call at the same number. */
export function divergenceMessage(seq, entry, name, args) {
  return (
    `replay diverged at call #${seq}: the journal has ${shownCall(entry.name, entry.args)} there, the program called ` +
    `${shownCall(name, args)}. A durable program must make the same calls with the same arguments on every attempt: ` +
    'what decides them must not come from randomness, clocks or anything the tools return differently'
  )
}

/**
 * One durable attempt's journal: the entries it was given and those it adds, each call the
 * host answered (`ok`, the reply's value or the failure's message), in call order.
 */
export class Journal {
  constructor({ calls, logs, seed, clock, zone, last, bytes }) {
    this.replayed = calls
    this.added = new Map()
    this.logs = logs
    this.seed = seed
    this.clock = clock
    this.zone = zone
    /** How many calls the journal answers: the attempt replays until its program has made them. */
    this.replayedCalls = last
    // The bytes of JSON the journal holds with what it was given and the calls added so far, and
    // room for a zone it does not have yet: the attempt's logs aside, what it would be if kept.
    this.bytes = bytes + MAX_ZONE + 2
  }

  /** The entry call `seq` replays, if the journal has one. */
  replay(seq) {
    return this.replayed.get(seq)
  }

  /**
   * Call `seq` was answered by the host: journaled, or false when its entry would take the
   * journal past `MAX_JOURNAL_BYTES` (the attempt is then ended; the entry is not kept).
   */
  record(seq, name, args, ok, valueOrMessage) {
    const entry = ok ? { seq, name, args, ok, value: valueOrMessage } : { seq, name, args, ok, message: valueOrMessage }
    // The entry and the comma before it.
    const bytes = jsonBytes(entry) + 1
    if (this.bytes + bytes > MAX_JOURNAL_BYTES) return false
    this.bytes += bytes
    this.added.set(seq, ObjectFreeze(entry))
    return true
  }

  /** The message of an attempt ended because call `seq`'s entry would not fit in the journal. */
  static fullMessage(seq) {
    return (
      `${PREFIX}the journal would grow past MAX_JOURNAL_BYTES (${MAX_JOURNAL_BYTES} bytes of JSON) with call #${seq}'s ` +
      "answer; the run was ended. A durable run's calls (their arguments and answers) and what it prints are kept " +
      'in one journal: pass and print less'
    )
  }

  /**
   * The journal to keep: every call answered so far, in call order, and the logs of the attempt
   * (or those it was given, when it printed fewer: it ended before its replay got as far).
   */
  toJSON(logs) {
    const calls = [...this.replayed.values(), ...this.added.values()].sort((a, b) => a.seq - b.seq)
    const kept = [...(logs.length >= this.logs.length ? logs : this.logs)]
    return { version: JOURNAL_VERSION, seed: this.seed, clock: this.clock, zone: this.zone ?? null, calls, logs: kept }
  }

  /** The message of an attempt whose logs would not fit in its journal. */
  static logsMessage() {
    return (
      `${PREFIX}what the run printed would take its journal past MAX_JOURNAL_BYTES (${MAX_JOURNAL_BYTES} bytes of JSON); ` +
      'its result is this failure, and its journal keeps only what it was given. A durable run keeps what it prints in ' +
      'its journal: print less'
    )
  }

  /**
   * The journal to keep and whether the attempt's logs fitted in it. Its calls always fit (an
   * attempt whose call would not is ended), its logs may not: it then keeps the logs it was
   * given, so that it can be read again.
   */
  kept(logs) {
    const journal = this.toJSON(logs)
    if (logs.length === 0 || jsonBytes(journal) <= MAX_JOURNAL_BYTES) return { journal, fits: true }
    return { journal: this.toJSON([]), fits: false }
  }
}
