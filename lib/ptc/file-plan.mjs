// The file access a sandbox policy gives a Python run, as a plan the native layer enforces (the
// sandbox helper's Landlock rules and mount namespace). The plan is computed here and passed to
// `pythonStartRun` as `filePolicy`; until the native layer consumes it, a run under a confined
// mode is refused as `sandbox-unavailable` (lib/ptc/services.mjs), never run unconfined.
import native from '../native.mjs'

/**
 * @typedef {object} FilePlan
 * @property {string} cwd the child's working directory (the spec's `cwd`)
 * @property {string[]} readOnly trees the child may read (and not write)
 * @property {string[]} readWrite trees the child may read and write; `['/']` lifts the file rules
 * @property {boolean} network whether the child may use the network
 * @property {boolean} locks whether the child may take file locks (`flock`, `fcntl` record and
 *   open file description locks, leases); refused, each fails with EPERM
 */

/**
 * The plan of one run. Besides what it lists, the child always reads its interpreter and the
 * system libraries and writes its own scratch directory (the native layer adds those).
 * - `read-only`: the workspace readable, no write outside the scratch (`/dev/null` is the
 *   sink the host's vocabulary names for every confined mode), and no file lock at all: a lock
 *   is on the file itself, so one taken through a read-only descriptor would still hold off the
 *   host's own processes (docs/seam.md#file-locks);
 * - `workspace-write`: the workspace writable too, locks included;
 * - `danger-full-access`: Landlock's file rules lifted (`/`), network on; the run is still its
 *   own process in its own root (which never holds the host's `/`), so the workspace is named
 *   for it to reach, as the host's own files.
 * The working directory is always granted for reading, so the child can start in it (but `/`,
 * which would grant the host's whole tree: the run then starts at the top of its own root). Whether it
 * lies inside the workspace (and so adds nothing) is decided by the sandbox helper on the opened
 * objects, never on these strings; every path here was checked by `resolve()` to have no
 * symbolic link in it, and the helper opens each again the same way and mounts what it opened.
 * @param {{ mode: string, workspaceRoot: string }} policy a resolved policy (lib/ptc/resolve.mjs)
 * @param {string} cwd the resolved working directory
 * @returns {FilePlan}
 */
export function filePlan(policy, cwd) {
  const root = policy.workspaceRoot
  const start = cwd === root || cwd === '/' ? [] : [cwd]
  // `/` lifts the file rules; the workspace is still named, as the host's own files.
  if (policy.mode === 'danger-full-access') return { cwd, readOnly: start, readWrite: ['/', root], network: true, locks: true }
  if (policy.mode === 'workspace-write') {
    return { cwd, readOnly: start, readWrite: [root, '/dev/null'], network: false, locks: true }
  }
  return { cwd, readOnly: [root, ...start], readWrite: ['/dev/null'], network: false, locks: false }
}

/** Whether `path` is `root` or below it (both absolute; compared by path segments). */
function within(path, root) {
  const base = root.endsWith('/') ? root : `${root}/`
  return path === root || path.startsWith(base) || root === '/'
}

/**
 * Whether file policies are enforced on this backend's Python runs: this build applies the plan
 * (native `pythonFilePolicyAvailable()`), and on this machine the sandbox helper runs the children
 * with Landlock at least (`runtime.sandbox`, measured at load). Otherwise a confined mode is
 * refused as `sandbox-unavailable`, never run unconfined.
 * @param {{ sandbox: { helper: boolean, landlock: number } }} backend
 */
export function filePolicyAvailable(backend) {
  const built = typeof native.pythonFilePolicyAvailable === 'function' && native.pythonFilePolicyAvailable() === true
  return built && backend.sandbox.helper === true && backend.sandbox.landlock > 0
}

/**
 * The host's `denied`: whether the run failed with what looks like the kernel refusing it a file
 * effect its policy forbids. It is the program's claim, checked as far as the host can
 * (docs/seam.md#denied-the-programs-claim): the uncaught exception, as the runner rendered it, is
 * an `OSError` or `PermissionError` with errno EPERM, EACCES or EROFS that names a file (as a
 * failed system call's does; one the program raised without a file, text in another exception,
 * a later line of a message and the logs do not count), and a file the plan does not let it write;
 * or, where the run has a root of its own, a `FileNotFoundError` (ENOENT) naming a file its root
 * does not hold (the host's file is hidden from it, not absent).
 * The runner runs in the program's own process, so a program that raises such an error itself,
 * naming such a file, still gets `true`: a host must not act on it alone.
 * @param {{ error?: { kind: string, message: string } }} result
 * @param {FilePlan} plan the run's plan
 * @param {{ trees: readonly string[], stagingPrefix: string }} [ownRoot] what the run's own root
 *   holds of the host's beside the plan's trees; absent when the run sees the host's tree
 */
export function refusedFileEffect(result, plan, ownRoot) {
  const error = result.error
  if (error?.kind !== 'exception') return false
  const refusal = refusedFiles(error.message)
  if (refusal === undefined) return false
  const files = refusal.files.map((file) => absolute(file, plan.cwd))
  if (refusal.errno !== 2) return files.some((file) => !plan.readWrite.some((tree) => within(file, tree)))
  if (ownRoot === undefined) return false
  const held = [...plan.readOnly, ...plan.readWrite, plan.cwd, ...ownRoot.trees]
  return files.some((file) => !file.startsWith(ownRoot.stagingPrefix) && !held.some((tree) => within(file, tree)))
}

/**
 * `PermissionError: [Errno 13] Permission denied: '/w/f'` (`-> '/w/g'` for two files), and
 * `FileNotFoundError: [Errno 2] No such file or directory: '/h/f'`.
 */
const REFUSAL = /^(?:(?:PermissionError|OSError): \[Errno (1|13|30)\]|(?:FileNotFoundError|OSError): \[Errno (2)\]) [^\n]*?: ('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")(?: -> ('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"))?$/

/**
 * The errno and files a rendered failure's refusal names: its last traceback's last frame must be
 * followed by exactly one line (the exception's own, a single line for an OSError of a system
 * call), and that line must be a refusal naming a file. `undefined` otherwise.
 */
function refusedFiles(message) {
  const lines = message.split('\n')
  let last = -1
  for (let i = 0; i < lines.length; i++) if (lines[i].startsWith('  File "')) last = i
  if (last < 0) return undefined
  // The frame's source line and its carets.
  let i = last + 1
  while (i < lines.length && lines[i].startsWith('    ')) i++
  if (i !== lines.length - 1) return undefined
  const match = REFUSAL.exec(lines[i])
  if (match === null) return undefined
  const files = [match[3], match[4]].filter((quoted) => quoted !== undefined).map(unquote)
  return { errno: Number(match[1] ?? match[2]), files }
}

/** A Python repr of a str path; escapes left as they are (such a path is then never within a tree). */
function unquote(quoted) {
  return quoted.slice(1, -1)
}

/** `file` made absolute against `cwd` (segments kept as written). */
function absolute(file, cwd) {
  return file.startsWith('/') ? file : `${cwd.endsWith('/') ? cwd : `${cwd}/`}${file}`
}
