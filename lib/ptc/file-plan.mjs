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
 */

/**
 * The plan of one run. Besides what it lists, the child always reads its interpreter and the
 * system libraries and writes its own scratch directory (the native layer adds those).
 * - `read-only`: the workspace readable, no write outside the scratch (`/dev/null` is the
 *   sink the host's vocabulary names for every confined mode);
 * - `workspace-write`: the workspace writable too;
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
  if (policy.mode === 'danger-full-access') return { cwd, readOnly: start, readWrite: ['/', root], network: true }
  if (policy.mode === 'workspace-write') return { cwd, readOnly: start, readWrite: [root, '/dev/null'], network: false }
  return { cwd, readOnly: [root, ...start], readWrite: ['/dev/null'], network: false }
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
 * Whether a run's failure text is the kernel refusing it a file effect (the host's `denied`:
 * the program's failure text matched the backend's diagnostics, not an exhaustive record).
 * @param {{ error?: { kind: string, message: string } }} result
 */
export function refusedFileEffect(result) {
  const error = result.error
  return error?.kind === 'exception' && /\bPermissionError\b|\[Errno (1|13|30)\] (Operation not permitted|Permission denied|Read-only file system)\b/.test(error.message)
}
