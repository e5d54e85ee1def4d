// What the `ctx.ptcRuntime` classes add to a backend's config: the elapsed deadline's default and
// cap (the `timeout` descriptor), the default working directory, and the advertised file-policy
// mode (`sandboxMode`). Checked at load, before the service exists, with messages that name the
// key.
import Schema from 'schemastery'
import { PREFIX } from '../request.mjs'
import { SANDBOX_MODES, describe, readCwd } from './resolve.mjs'

/** Node clamps a longer timer delay to 1 ms; the host's own backends refuse it too. */
const MAX_TIMER_MS = 2147483647

export const DEFAULT_TIMEOUT_MS = 120000
export const DEFAULT_MAX_TIMEOUT_MS = 600000

/** The schema entries of the seam's keys (each class adds its backend's). */
export const PTC_SCHEMA = {
  timeoutMs: Schema.number().default(DEFAULT_TIMEOUT_MS)
    .description('Elapsed deadline of a run whose request names none, in ms.'),
  maxTimeoutMs: Schema.number().default(DEFAULT_MAX_TIMEOUT_MS)
    .description("Cap of a request's numeric timeoutMs, in ms."),
  cwd: Schema.string().description('Working directory of a run whose request names none (absolute). Default: the process cwd at load.'),
  sandboxMode: Schema.union(SANDBOX_MODES).default('read-only')
    .description('The file-policy mode the runtime advertises as `sandboxMode`.'),
}

/** The backend's own config: `config` without the seam's keys. */
export function backendConfig(config) {
  const { timeoutMs, maxTimeoutMs, cwd, sandboxMode, ...rest } = config ?? {}
  return rest
}

/**
 * The seam's settings of one runtime, validated: `{ timeout: { defaultMs, maxMs }, cwd,
 * sandboxMode }` (frozen). Throws the first violation.
 */
export function ptcSettings(config) {
  const defaultMs = config?.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const maxMs = config?.maxTimeoutMs ?? DEFAULT_MAX_TIMEOUT_MS
  for (const [key, value] of [['timeoutMs', defaultMs], ['maxTimeoutMs', maxMs]]) {
    if (typeof value !== 'number' || !(value > 0) || value > MAX_TIMER_MS) {
      throw new Error(`${PREFIX}config.${key} must be a positive number of milliseconds of at most ${MAX_TIMER_MS}, got ${describe(value)}`)
    }
  }
  // A default above the cap is capped, as the host's own backends do.
  const cwd = readCwd(config?.cwd ?? process.cwd(), 'config.cwd')
  const sandboxMode = config?.sandboxMode ?? 'read-only'
  if (!SANDBOX_MODES.includes(sandboxMode)) {
    throw new Error(
      `${PREFIX}config.sandboxMode must be 'read-only', 'workspace-write' or 'danger-full-access', got ${describe(sandboxMode)}`,
    )
  }
  return Object.freeze({ timeout: Object.freeze({ defaultMs: Math.min(defaultMs, maxMs), maxMs }), cwd, sandboxMode })
}
