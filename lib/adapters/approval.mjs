// What the adapters' approval flows share (docs/durable.md#ctxptcruntime-and-the-adapters): the
// default store of paused programs, and the gate a call of a tool that needs approval passes.
import { sameJson, suspend } from '../durable.mjs'

/** Paused programs a default store keeps at most; the oldest is dropped first. */
const KEPT_RUNS = 1024

/** The default journal store: the paused programs of this process, the most recent `KEPT_RUNS`. */
export class RecentJournals extends Map {
  set(key, entry) {
    this.delete(key)
    super.set(key, entry)
    if (this.size > KEPT_RUNS) this.delete(this.keys().next().value)
    return this
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
