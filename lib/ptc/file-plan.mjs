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
 * - `danger-full-access`: file rules lifted, network on (the run is still its own process).
 * A `cwd` outside the workspace is readable, so the child can start in it.
 * @param {{ mode: string, workspaceRoot: string }} policy a resolved policy (lib/ptc/resolve.mjs)
 * @param {string} cwd the resolved working directory
 * @returns {FilePlan}
 */
export function filePlan(policy, cwd) {
  if (policy.mode === 'danger-full-access') return { cwd, readOnly: [], readWrite: ['/'], network: true }
  const root = policy.workspaceRoot
  const outside = !within(cwd, root)
  if (policy.mode === 'workspace-write') {
    return { cwd, readOnly: outside ? [cwd] : [], readWrite: [root, '/dev/null'], network: false }
  }
  return { cwd, readOnly: outside ? [root, cwd] : [root], readWrite: ['/dev/null'], network: false }
}

/** Whether `path` is `root` or below it (both absolute; compared by path segments). */
function within(path, root) {
  const base = root.endsWith('/') ? root : `${root}/`
  return path === root || path.startsWith(base) || root === '/'
}

/**
 * Whether this build's native layer enforces a `filePolicy` on Python runs. The hook for the
 * native file policy (README: "Python and file policies"): it exports `pythonFilePolicyAvailable()`
 * returning true once `pythonStartRun` applies the plan, false where the kernel lacks the layers.
 */
export function filePolicyAvailable() {
  return typeof native.pythonFilePolicyAvailable === 'function' && native.pythonFilePolicyAvailable() === true
}
