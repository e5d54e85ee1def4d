// What the adapters' approval flows share (docs/durable.md#ctxptcruntime-and-the-adapters): the
// default store of paused programs, and the gate a call of a tool that needs approval passes.
import { sameJson, suspend } from '../durable.mjs'
import { PREFIX } from '../request.mjs'

/** Paused programs a default store keeps at most; the oldest is dropped first. */
export const KEPT_RUNS = 1024
/**
 * Bytes of JSON a default store keeps at most (a journal alone may be `MAX_JOURNAL_BYTES`): the
 * host's memory stays bounded however large the paused programs are. The newest is always kept.
 */
export const KEPT_BYTES = 256 * 1024 * 1024

/**
 * The default journal store: the paused programs of this process, the most recent `KEPT_RUNS`
 * within `KEPT_BYTES`.
 */
export class RecentJournals extends Map {
  #bytes = new Map()
  #total = 0

  set(key, entry) {
    this.delete(key)
    const bytes = Buffer.byteLength(JSON.stringify(entry) ?? '', 'utf8')
    super.set(key, entry)
    this.#bytes.set(key, bytes)
    this.#total += bytes
    while (this.size > 1 && (this.size > KEPT_RUNS || this.#total > KEPT_BYTES)) this.delete(this.keys().next().value)
    return this
  }

  delete(key) {
    this.#total -= this.#bytes.get(key) ?? 0
    this.#bytes.delete(key)
    return super.delete(key)
  }

  clear() {
    this.#bytes.clear()
    this.#total = 0
    super.clear()
  }
}

/**
 * Lets one call of tool `name` that may need approval through, or pauses the program there with
 * `suspend({ tool, input })`: the call `approved` names (`{ tool, input, used }`, a resumed
 * attempt's) goes through once, as does any call for which `needsApproval()` does not hold.
 */
export async function approveOrPause(name, input, approved, needsApproval) {
  const given = input ?? null
  if (approved !== undefined && !approved.used && approved.tool === name && sameJson(approved.input, given)) {
    approved.used = true
    return
  }
  if (await needsApproval()) throw suspend({ tool: name, input: given })
}

/** What a store keeps of a paused program: plain JSON. */
export function pausedRun(kind, code, result) {
  return { kind, code, journal: result.journal, paused: result.suspended.data }
}

/**
 * A paused program as `store.get(key)` gave it back, checked: the store is input like any other
 * (a database can be tampered with). `undefined` when the store has none; a TypeError naming what
 * is wrong otherwise. Its journal is checked whole when it resumes (lib/durable.mjs).
 */
export async function storedRun(store, key) {
  const entry = await store.get(key)
  if (entry === undefined || entry === null) return undefined
  const problem =
    typeof entry !== 'object' || Array.isArray(entry)
      ? 'is not an object'
      : entry.kind !== 'approval' && entry.kind !== 'continue'
        ? 'has a kind other than "approval" or "continue"'
        : typeof entry.code !== 'string'
          ? 'has no string code'
          : entry.paused === null || typeof entry.paused !== 'object' || typeof entry.paused.tool !== 'string' || !('input' in entry.paused)
            ? 'has no paused call ({ tool, input })'
            : undefined
  if (problem === undefined) return entry
  throw new TypeError(
    `${PREFIX}the paused program stored under ${JSON.stringify(key)} ${problem}; a journal store must give back what it was given, unchanged`,
  )
}
