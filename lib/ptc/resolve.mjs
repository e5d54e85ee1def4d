// `resolve(request)` of the `ctx.ptcRuntime` seam: what the host's resolver does for its own
// backends. It reads each field of a hostile request once, fills the deployment defaults (cwd,
// the elapsed deadline) and refuses what the runtime cannot honour, as caller misuse that names
// the field. Its result is the only thing `run()` accepts (docs/seam.md#resolverequest).
import { statSync } from 'node:fs'
import { isAbsolute, resolve as normalize } from 'node:path'
import native from '../native.mjs'
import { PREFIX, renderRejection } from '../request.mjs'

/** The file-policy modes of the host's sandbox vocabulary (`@deepseek-ai/dsh-sandbox`). */
export const SANDBOX_MODES = Object.freeze(['read-only', 'workspace-write', 'danger-full-access'])

/**
 * The native wall ceiling of a run resolved with `timeoutMs: null`: 2^53 - 1 ms, about 285 000
 * years, which no run reaches. A run then ends only by its compute budget, its program, an abort
 * or dispose; the native layers keep no timer for it that could hold the host open.
 */
export const NO_DEADLINE_MS = Number.MAX_SAFE_INTEGER

/** A value as an error message shows it, without reading anything of an object. */
export function describe(value) {
  if (value === null) return 'null'
  if (typeof value === 'string') return JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  if (typeof value === 'undefined') return 'undefined'
  if (typeof value === 'symbol') return 'a symbol'
  if (typeof value === 'function') return 'a function'
  try {
    return Array.isArray(value) ? 'an array' : 'an object'
  } catch {
    return 'an object' // a revoked Proxy
  }
}

/** Reads `object[key]` once; a throwing getter or proxy trap is misuse that names the field. */
function read(object, key, field) {
  try {
    return object[key]
  } catch (error) {
    throw new TypeError(`${PREFIX}${field} could not be read: ${renderRejection(error)}`)
  }
}

/**
 * An absolute path without NUL bytes, normalised (`.`, `..` and repeated or trailing slashes
 * resolved), or the misuse error naming `field`.
 */
function absolutePath(value, field, what) {
  if (typeof value !== 'string' || value === '' || value.includes('\0') || !isAbsolute(value)) {
    throw new TypeError(`${PREFIX}${field} must be ${what}, got ${describe(value)}`)
  }
  return normalize(value)
}

/** `cwd` of a request or of the config: an absolute path of a directory that exists now. */
export function readCwd(value, field) {
  const what = 'the absolute path of an existing directory'
  const cwd = absolutePath(value, field, what)
  let stats
  try {
    stats = statSync(cwd)
  } catch (error) {
    throw new TypeError(`${PREFIX}${field} must be ${what}: ${describe(cwd)} cannot be read (${error.code ?? renderRejection(error)})`)
  }
  if (!stats.isDirectory()) throw new TypeError(`${PREFIX}${field} must be ${what}: ${describe(cwd)} is not a directory`)
  return cwd
}

/**
 * A path of a sandbox policy (the workspace, the run's working directory), checked as the kernel
 * finds it with no symbolic link followed anywhere in it (native `policyPath`, src/sandbox/exact.rs):
 * an existing directory, never the host's root (a working directory may be `/` itself, which grants
 * nothing: the run starts at the top of its own root; any other path to `/` is refused). The sandbox helper opens it the same way again and
 * mounts what it opened, so a link planted by an earlier run (in a workspace it could write) fails
 * the request here, or the run later, and never widens what a run sees.
 */
function policyDirectory(path, field, slash = false) {
  const what = 'the absolute path of an existing directory with no symbolic link in it'
  const found = native.policyPath(path)
  if (found.error === 'ELOOP') {
    throw new TypeError(
      `${PREFIX}${field} must be ${what}: ${describe(path)} passes through a symbolic link, and a sandbox policy's ` +
        'paths are taken literally (a link an earlier run planted must never widen a later run). Pass the real path ' +
        '(fs.realpathSync) of a directory you trust',
    )
  }
  if (found.error != null) throw new TypeError(`${PREFIX}${field} must be ${what}: ${describe(path)} cannot be read (${found.error})`)
  if (!found.directory) throw new TypeError(`${PREFIX}${field} must be ${what}: ${describe(path)} is not a directory`)
  if (found.hostRoot && !(slash && path === '/')) {
    throw new TypeError(
      `${PREFIX}${field} must not be the host's root directory, got ${describe(path)}: a sandbox policy confines a run ` +
        "to directories of its own, and '/' would grant the host's whole tree. Name the workspace's own directory",
    )
  }
  return path
}

/**
 * The elapsed deadline: omitted → the configured default, `null` → none, a number → validated
 * and capped at the configured maximum.
 */
function readTimeout(value, timeout, field) {
  if (value === undefined) return timeout.defaultMs
  if (value === null) return null
  if (typeof value !== 'number' || !(value > 0) || value === Infinity) {
    throw new TypeError(
      `${PREFIX}${field} must be a positive finite number of milliseconds (capped at ${timeout.maxMs}), ` +
        `null for no elapsed deadline, or omitted for the default ${timeout.defaultMs}; got ${describe(value)}`,
    )
  }
  return Math.min(value, timeout.maxMs)
}

/**
 * A copy of the policy, every field checked: `{ mode, workspaceRoot, sessionId? }`. `name` is how
 * messages call it: `request.sandboxPolicy`, `spec.sandboxPolicy`, or the host's standing one.
 */
function readPolicy(value, name) {
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`${PREFIX}${name} must be an object { mode, workspaceRoot, sessionId? } or omitted, got ${describe(value)}`)
  }
  const mode = read(value, 'mode', `${name}.mode`)
  if (!SANDBOX_MODES.includes(mode)) {
    throw new TypeError(`${PREFIX}${name}.mode must be 'read-only', 'workspace-write' or 'danger-full-access', got ${describe(mode)}`)
  }
  const field = `${name}.workspaceRoot`
  const root = read(value, 'workspaceRoot', field)
  const workspaceRoot = policyDirectory(absolutePath(root, field, 'an absolute path'), field)
  const sessionId = read(value, 'sessionId', `${name}.sessionId`)
  if (sessionId !== undefined && typeof sessionId !== 'string') {
    throw new TypeError(`${PREFIX}${name}.sessionId must be a string or omitted, got ${describe(sessionId)}`)
  }
  const policy = { mode, workspaceRoot }
  if (sessionId !== undefined) policy.sessionId = sessionId
  return Object.freeze(policy)
}

/**
 * The resolved spec of `request` under a runtime's settings: `{ program, bindings, signal?, cwd,
 * timeoutMs, sandboxPolicy? }`, frozen. `program` and `bindings` are carried as they are (`run()`
 * checks them, as on the old seam); every other field is checked here, in this order.
 * A request that names no policy gets the runtime's standing one, if it has one (Python under the
 * host's `ctx.sandboxPolicy`), checked like a request's.
 * @param {unknown} request
 * @param {{ cwd: string, timeout: { defaultMs: number, maxMs: number } }} settings
 * @param {() => unknown} [standing] the standing policy, or undefined for none
 */
export function resolveSpec(request, settings, standing) {
  return readSpec(request, settings, 'request', standing ?? (() => undefined))
}

/**
 * A spec `run()` was given that its runtime's `resolve()` did not return (a copy, a spread with a
 * field changed, one the host built): accepted when it is well formed, as the host's own backends
 * accept it, every field checked again exactly as `resolve()` checks it. Nothing is filled in:
 * `cwd` and `timeoutMs` must be there, and a numeric deadline must be within the cap.
 */
export function readResolvedSpec(spec, settings) {
  return readSpec(spec, settings, 'spec', undefined)
}

/** `standing` is given when resolve() reads a request (it fills what is missing), not for run(). */
function readSpec(request, settings, what, standing) {
  const fill = standing !== undefined
  if (request === null || typeof request !== 'object') {
    const call = fill ? 'resolve(request)' : 'run(spec)'
    throw new TypeError(`${PREFIX}${call}: ${what} must be an object, got ${describe(request)}`)
  }
  const program = read(request, 'program', `${what}.program`)
  const bindings = read(request, 'bindings', `${what}.bindings`)
  const signal = read(request, 'signal', `${what}.signal`)
  const cwdValue = read(request, 'cwd', `${what}.cwd`)
  if (!fill && cwdValue === undefined) throw new TypeError(`${PREFIX}${UNRESOLVED}: spec.cwd is missing`)
  const timeoutValue = read(request, 'timeoutMs', `${what}.timeoutMs`)
  if (!fill && timeoutValue === undefined) throw new TypeError(`${PREFIX}${UNRESOLVED}: spec.timeoutMs is missing`)
  if (!fill && typeof timeoutValue === 'number' && timeoutValue > settings.timeout.maxMs) {
    throw new TypeError(`${PREFIX}${UNRESOLVED}: spec.timeoutMs ${timeoutValue} exceeds config.maxTimeoutMs (${settings.timeout.maxMs})`)
  }
  // `timeoutMs: undefined` written out is the same as omitting it (the host's optional field).
  const timeoutMs = readTimeout(timeoutValue, settings.timeout, `${what}.timeoutMs`)
  const policyValue = read(request, 'sandboxPolicy', `${what}.sandboxPolicy`)
  const standingValue = policyValue === undefined && fill ? standing() : undefined
  const policy =
    policyValue !== undefined
      ? readPolicy(policyValue, `${what}.sandboxPolicy`)
      : standingValue !== undefined
        ? readPolicy(standingValue, "the host's standing policy (ctx.sandboxPolicy.resolve())")
        : undefined
  // Under a policy the run starts in its workspace unless the request names a directory, as the
  // host's own backends do: never in the host process's directory, which no policy named.
  const cwd =
    cwdValue !== undefined ? readCwd(cwdValue, `${what}.cwd`) : policy !== undefined ? policy.workspaceRoot : settings.cwd
  const spec = { program, bindings, cwd, timeoutMs }
  if (signal !== undefined) spec.signal = signal
  if (policy !== undefined) {
    spec.sandboxPolicy = policy
    // Under a policy the working directory is one of its paths (a Python run is granted it).
    if (cwdValue !== undefined) policyDirectory(cwd, `${what}.cwd`, true)
  }
  return Object.freeze(spec)
}

/** What a spec `run()` cannot take says first. */
const UNRESOLVED = 'run(spec) needs a resolved spec: call runtime.run(runtime.resolve(request))'
