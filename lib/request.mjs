// Reading a CodeRunRequest once, defensively, and the seam rules both backends apply to it
// (docs/seam.md). Validation itself lives in Rust (src/seam) so both backends share it.
import { types } from 'node:util'
import native from './native.mjs'

/** The prefix of every error message the runtime itself writes (src/outcome.rs). */
export const PREFIX = native.PREFIX
/**
 * The seam's message for a value that cannot be turned into a string
 * (docs/seam.md#namespaces-and-typed-errors).
 */
export const UNRENDERABLE = '<unrenderable rejection value>'

/** `maxPendingCalls` when the config names none (src/channel/backlog.rs). */
export const DEFAULT_MAX_PENDING_CALLS = native.DEFAULT_MAX_PENDING_CALLS
/** The largest `maxPendingCalls` a config may name. */
const MAX_PENDING_CALLS_LIMIT = 65536

/**
 * Checks `config.maxPendingCalls` (absent: the default), shared by both backends
 * (docs/budgets-and-ledger.md#the-hosts-memory).
 */
export function validatePendingCalls(value) {
  if (value === undefined) return
  if (!(Number.isSafeInteger(value) && value >= 1 && value <= MAX_PENDING_CALLS_LIMIT)) {
    throw new Error(`${PREFIX}config.maxPendingCalls must be an integer from 1 to ${MAX_PENDING_CALLS_LIMIT}, got ${String(value)}`)
  }
}

/**
 * Rejection of `run()` called without its runtime as `this` (`const { run } = runtime`): a run
 * never throws synchronously, so this too is a rejected promise.
 */
export function unboundRunError(receiver) {
  const what = receiver === undefined || receiver === null ? String(receiver) : 'not this runtime'
  return new TypeError(
    `${PREFIX}run() was called without its runtime (this is ${what}): call it as runtime.run(request), or bind it first (runtime.run.bind(runtime))`,
  )
}

/** Rejection of `run()` after dispose (docs/seam.md#disposal). */
export function afterDisposalError() {
  return new Error(`${PREFIX}run() after disposal`)
}

function requireString(value, what) {
  if (typeof value !== 'string') {
    throw new TypeError(`${PREFIX}${what} must be a string, got ${value === null ? 'null' : typeof value}`)
  }
  return value
}

/**
 * Reads `request.bindings` once: each descriptor field exactly once, in order.
 * Returns `{ global, functions, errorClass }[]`; a malformed request throws the access's TypeError.
 * @param {unknown} bindings
 */
export function readNamespaces(bindings) {
  const namespaces = []
  for (const ns of bindings) {
    const global = requireString(ns.global, 'binding global')
    const functions = ns.functions
    if (functions === null || (typeof functions !== 'object' && typeof functions !== 'function')) {
      throw new TypeError(`${PREFIX}binding ${JSON.stringify(global)} has no functions object`)
    }
    const declared = ns.errorClass
    let errorClass
    if (declared !== undefined && declared !== null) {
      errorClass = {
        name: requireString(declared.name, 'errorClass.name'),
        memberNameProperty: requireString(declared.memberNameProperty, 'errorClass.memberNameProperty'),
      }
    }
    namespaces.push({ global, functions, errorClass, callNames: ns[CALL_NAMES] })
  }
  return namespaces
}

/**
 * A namespace this package built may say how its members' calls are named in `stats.calls` and
 * traces (`{ member: name }`, frozen): the framework adapters' hidden namespace names each call by
 * the framework's tool (lib/adapters/bridge.mjs). Only this package holds the symbol.
 */
export const CALL_NAMES = Symbol('code-runtime-native.callNames')

/**
 * Validates namespaces with the shared rules; throws the exact seam message on the first violation.
 * @param {{ global: string, errorClass?: { name: string, memberNameProperty: string } }[]} namespaces
 * @param {'isolate' | 'python'} dialect
 */
export function validateNamespaces(namespaces, dialect) {
  const message = native.validateBindings(
    namespaces.map(({ global, errorClass }) => ({
      global,
      errorClassName: errorClass?.name,
      memberNameProperty: errorClass?.memberNameProperty,
    })),
    dialect,
  )
  if (message != null) throw new Error(message)
}

/** `String(x)`, or the seam's fallback when the conversion throws. */
export function renderReason(reason) {
  try {
    return String(reason)
  } catch {
    return UNRENDERABLE
  }
}

/**
 * `err.message` for Errors (of any realm), `String(err)` otherwise, with the seam's fallback
 * (docs/seam.md#namespaces-and-typed-errors).
 */
export function renderRejection(err) {
  try {
    return String(err instanceof Error || types.isNativeError(err) ? err.message : err)
  } catch {
    return UNRENDERABLE
  }
}
