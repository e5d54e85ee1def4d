// What happened to each binding call of one run: `stats.calls` (docs/tracing.md#statscalls).
// A call is numbered as it reaches the host, which is the order the program made its calls in:
// an isolate and a Python child each send their calls in the order they were made, over one
// ordered channel, so calls started together (`Promise.all`, `asyncio.gather`) keep their
// numbers from run to run.

/** Calls recorded per run at most; `stats.callCount` counts every call. */
export const MAX_CALL_RECORDS = 1000

const now = () => performance.now()
const ObjectFreeze = Object.freeze

/** One run's call records, from its start (`run()`). */
export class CallLog {
  constructor() {
    this.startedAt = now()
    this.count = 0
    /** @type {object[]} */
    this.records = []
  }

  /**
   * A call the program made (its number is `count` after this): its record, `undefined` past
   * the cap. Its outcome stays unset until the program is answered; at the run's end an unset
   * one is `abandoned`. Times are kept raw and rounded when the records are read.
   */
  open(name, argBytes) {
    const seq = ++this.count
    if (seq > MAX_CALL_RECORDS) return undefined
    const record = { seq, name, startedMs: now(), settledMs: undefined, outcome: undefined, argBytes, resultBytes: 0 }
    this.records.push(record)
    return record
  }

  /** The host's function settled (the program may still never see it). */
  settled(record) {
    if (record !== undefined && record.settledMs === undefined) record.settledMs = now()
  }

  /** The program was answered with a reply of `bytes` bytes of JSON. */
  answered(record, ok, bytes) {
    if (record === undefined) return
    record.outcome = ok ? 'resolved' : 'rejected'
    record.resultBytes = bytes
  }

  /** The records as `stats.calls` shows them: frozen, in call order, the unanswered abandoned. */
  snapshot() {
    const since = (at) => Math.round((at - this.startedAt) * 1000) / 1000
    return ObjectFreeze(this.records.map((record) => freezeRecord(record, since)))
  }
}

function freezeRecord({ seq, name, startedMs, settledMs, outcome, argBytes, resultBytes }, since) {
  const record = { seq, name, startedMs: since(startedMs) }
  if (settledMs !== undefined) record.settledMs = since(settledMs)
  record.outcome = outcome ?? 'abandoned'
  record.argBytes = argBytes
  record.resultBytes = outcome === undefined ? 0 : resultBytes
  return ObjectFreeze(record)
}

/** `stats.calls` of a run that made none (it ended before it started, or never called). */
export const NO_CALLS = ObjectFreeze([])
