// The sandbox helper (`code-runtime-native-sandbox`) ships beside the addon where the platform
// package carries one (Linux), and every sandboxed child starts through it. The native side only
// finds a usable helper or none, and without one Python programs run with none of the kernel's
// layers and isolates cannot leave the host's threads. So each runtime checks the helper when it
// loads and refuses with what is wrong and how to repair the install, unless its config says
// `allowUnsandboxed: true`.
import { spawnSync } from 'node:child_process'
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import native from './native.mjs'
import { PREFIX } from './request.mjs'

export const SANDBOX_HELPER_ERROR = 'ERR_CODE_RUNTIME_NATIVE_SANDBOX_HELPER'

/** Run with no arguments, the helper refuses with this status (EXIT_USAGE, src/sandbox/abi.rs): it started and is the helper. */
const BY_HAND_STATUS = 125
const START_TIMEOUT_MS = 10_000

const ROOT_NAME = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).name

/**
 * The helper this addon starts its children through: `undefined` where the platform ships none;
 * else `{ path, problem }`, `problem` (what is wrong, as a clause) undefined when it is usable.
 */
export function inspectSandboxHelper(path = native.sandboxHelperPath()) {
  if (path == null) return undefined
  return { path, problem: helperProblem(path) }
}

/** What keeps the file at `path` from serving as the helper, or undefined. */
function helperProblem(path) {
  let stat
  try {
    stat = statSync(path)
  } catch (error) {
    return error.code === 'ENOENT' ? { kind: 'absent', text: 'is missing' } : { kind: 'unreadable', text: `cannot be examined (${error.message})` }
  }
  if (!stat.isFile()) return { kind: 'not-a-file', text: 'is not a file' }
  try {
    accessSync(path, constants.X_OK)
  } catch {
    const mode = (stat.mode & 0o7777).toString(8).padStart(4, '0')
    return { kind: 'not-executable', text: `is not executable (mode ${mode}, owner uid ${stat.uid}; this process runs as uid ${process.getuid()})` }
  }
  const run = spawnSync(path, [], { cwd: '/', env: {}, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: START_TIMEOUT_MS })
  if (run.error) return { kind: 'fails-to-start', text: `does not start (${run.error.message})` }
  if (run.status === BY_HAND_STATUS) return undefined
  const ended = run.status === null ? `was killed by ${run.signal}` : `exited with ${run.status}`
  const said = run.stderr.trim().split('\n')[0].slice(0, 200)
  return {
    kind: 'fails-to-start',
    text: `does not start as the helper does (run with no arguments it must exit with ${BY_HAND_STATUS}; it ${ended}${said ? `: ${said}` : ''})`,
  }
}

/** What holds the helper's directory: a platform package, a source checkout, or neither. */
function install(dir) {
  try {
    const { name, version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    if (typeof name === 'string' && name.startsWith(`${ROOT_NAME}-`)) return { kind: 'package', name, version }
  } catch {
    // No manifest there: not a platform package.
  }
  return { kind: existsSync(join(dir, 'Cargo.toml')) ? 'checkout' : 'other' }
}

/** How to repair the install, for this problem and this layout. */
function repair(path, problem) {
  const dir = dirname(path)
  const where = install(dir)
  const chmod = `\`chmod +x ${path}\``
  if (where.kind === 'package') {
    const reinstall = `reinstall ${where.name}@${where.version} (delete ${dir} and run \`npm install\` again)`
    return problem.kind === 'not-executable' ? `${chmod}, or ${reinstall}` : reinstall
  }
  if (where.kind === 'checkout') {
    if (problem.kind === 'absent') {
      return 'it is not built in this source checkout: run `npm run build`, which builds it with the addon and places it beside the addon (scripts/place-sandbox-helper.mjs)'
    }
    if (problem.kind === 'not-executable') return `${chmod}, or place it again with \`node scripts/place-sandbox-helper.mjs\``
    return 'rebuild it with `npm run build`'
  }
  return `put the ${basename(path)} built with this addon at ${path}, executable (${chmod})`
}

/**
 * The load-time error for an unusable helper. `consequence` says what the runtime would lose,
 * `optOut` how the host can choose to run without the helper instead.
 */
export function sandboxHelperError({ path, problem }, { consequence, optOut }) {
  const error = new Error(
    `${PREFIX}the sandbox helper ${path} ${problem.text}, so ${consequence}. Repair the install: ${repair(path, problem)}. ${optOut}`,
  )
  error.code = SANDBOX_HELPER_ERROR
  error.path = path
  error.problem = problem.kind
  return error
}
