// What the `ctx.ptcRuntime` classes add to a backend's config: the elapsed deadline's default and
// cap (the `timeout` descriptor), the default working directory, the largest message a run may
// exchange with the host (`maxMessageBytes`, the host's own key), and, for Python, the file-policy
// mode it advertises where the host has no policy service (`sandboxMode`). Checked at load, before
// the service exists, with messages that name the key.
import Schema from 'schemastery'
import { PREFIX } from '../request.mjs'
import { SANDBOX_MODES, describe, readCwd } from './resolve.mjs'

/** Node clamps a longer timer delay to 1 ms; the host's own backends refuse it too. */
const MAX_TIMER_MS = 2147483647

export const DEFAULT_TIMEOUT_MS = 120000
export const DEFAULT_MAX_TIMEOUT_MS = 600000
/** The host's Node backend's default, and its limit: a frame length is an unsigned 32-bit number. */
export const DEFAULT_MAX_MESSAGE_BYTES = 134217728
const MAX_MESSAGE_BYTES_LIMIT = 4294967295

/** The schema entries of the seam's keys both languages have (each class adds its backend's). */
export const PTC_SCHEMA = {
  timeoutMs: Schema.number().default(DEFAULT_TIMEOUT_MS)
    .description('Elapsed deadline of a run whose request names none, in ms.'),
  maxTimeoutMs: Schema.number().default(DEFAULT_MAX_TIMEOUT_MS)
    .description("Cap of a request's numeric timeoutMs, in ms."),
  cwd: Schema.string().description(
    "Working directory of a run whose request names neither a cwd nor a policy (absolute). Default: the process cwd at load.",
  ),
  maxMessageBytes: Schema.natural().default(DEFAULT_MAX_MESSAGE_BYTES).description(
    "Largest binding call's arguments, or binding reply, in bytes of JSON; also the cap of the arguments of the calls in flight together. Past it the run ends as `protocol`.",
  ),
}

/** Python's: the mode it advertises when the host has no `ctx.sandboxPolicy` (docs/seam.md). */
export const PYTHON_PTC_SCHEMA = {
  ...PTC_SCHEMA,
  sandboxMode: Schema.union(SANDBOX_MODES).default('read-only').description(
    "The file-policy mode advertised as `sandboxMode` and filled in by resolve() where the host has no `ctx.sandboxPolicy` (with one, its `defaultMode` and `resolve()` decide).",
  ),
}

/** TypeScript's: `graceMs` is the host's Node backend's key; a sandbox process needs no grace. */
export const ISOLATE_PTC_SCHEMA = {
  ...PTC_SCHEMA,
  graceMs: Schema.number().description(
    'Accepted for the host\'s Node backend\'s config: a run\'s sandbox process is killed at once, so there is nothing to wait for.',
  ),
}

/** The backend's own config: `config` without the seam's keys. */
export function backendConfig(config) {
  const { timeoutMs, maxTimeoutMs, cwd, sandboxMode, maxMessageBytes, ...rest } = config ?? {}
  return rest
}

/**
 * The seam's settings of one runtime, validated: `{ timeout: { defaultMs, maxMs }, cwd,
 * maxMessageBytes, sandboxMode? }` (frozen; `sandboxMode` is Python's). Throws the first violation.
 * @param {object | undefined} config
 * @param {'typescript' | 'python'} language
 */
export function ptcSettings(config, language) {
  // The old seam's ceiling has no meaning here: a run's deadline is its spec's. Silently ignored,
  // a deployment moved over from the old seam would lose the deadline it configured.
  if (config?.maxWallMs !== undefined) {
    throw new Error(
      `${PREFIX}config.maxWallMs is not a key of ctx.ptcRuntime: a run's deadline is its request's timeoutMs, ` +
        'defaulting to config.timeoutMs and capped at config.maxTimeoutMs. Use those keys instead',
    )
  }
  const defaultMs = config?.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const maxMs = config?.maxTimeoutMs ?? DEFAULT_MAX_TIMEOUT_MS
  for (const [key, value] of [['timeoutMs', defaultMs], ['maxTimeoutMs', maxMs]]) {
    readTimer(key, value)
  }
  // A default above the cap is capped, as the host's own backends do.
  const cwd = readCwd(config?.cwd ?? process.cwd(), 'config.cwd')
  const maxMessageBytes = config?.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
  if (!(Number.isSafeInteger(maxMessageBytes) && maxMessageBytes >= 1 && maxMessageBytes <= MAX_MESSAGE_BYTES_LIMIT)) {
    throw new Error(`${PREFIX}config.maxMessageBytes must be an integer from 1 to ${MAX_MESSAGE_BYTES_LIMIT}, got ${describe(maxMessageBytes)}`)
  }
  const timeout = Object.freeze({ defaultMs: Math.min(defaultMs, maxMs), maxMs })
  if (language === 'typescript') {
    if (config?.sandboxMode !== undefined) {
      throw new Error(
        `${PREFIX}config.sandboxMode is not a key of the TypeScript runtime: a program has no file system under any policy, ` +
          'so it advertises no mode and the host offers the model no sandbox escalation for it. Remove the key ' +
          '(a run given a sandboxPolicy still reports it in result.sandbox).',
      )
    }
    if (config?.graceMs !== undefined) readTimer('graceMs', config.graceMs)
    return Object.freeze({ timeout, cwd, maxMessageBytes })
  }
  const sandboxMode = config?.sandboxMode ?? 'read-only'
  if (!SANDBOX_MODES.includes(sandboxMode)) {
    throw new Error(
      `${PREFIX}config.sandboxMode must be 'read-only', 'workspace-write' or 'danger-full-access', got ${describe(sandboxMode)}`,
    )
  }
  return Object.freeze({ timeout, cwd, maxMessageBytes, sandboxMode })
}

function readTimer(key, value) {
  if (typeof value !== 'number' || !(value > 0) || value > MAX_TIMER_MS) {
    throw new Error(`${PREFIX}config.${key} must be a positive number of milliseconds of at most ${MAX_TIMER_MS}, got ${describe(value)}`)
  }
}
