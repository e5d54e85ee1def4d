// `config.runAs`, shared by both runtimes: the uid and gid a root host's sandboxed children have
// outside their namespaces. A run never has a root host's own ids; by default it is `nobody`.
// On a host that is not root the children have the host's ids and this option is not used.
import Schema from 'schemastery'

// Any value passes the schema: `readRunAs` checks it and names what is wrong.
export const RUN_AS_SCHEMA = Schema.any()
  .description("{ uid, gid } a root host's sandboxed children have (default nobody, 65534); ignored when the host is not root.")

const MAX_ID = 4294967294

/** The validated `{ uid, gid }`, or `undefined` when unset; `fail` gets the message. */
export function readRunAs(value, fail) {
  if (value === undefined) return undefined
  const ok = (id) => Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID
  if (value === null || typeof value !== 'object' || !ok(value.uid) || !ok(value.gid)) {
    let shown
    try {
      shown = JSON.stringify(value)
    } catch {
      shown = String(value)
    }
    fail(`config.runAs must be { uid, gid } with integers from 1 to ${MAX_ID} (a run never gets uid or gid 0), got ${shown}`)
  }
  return Object.freeze({ uid: value.uid, gid: value.gid })
}
