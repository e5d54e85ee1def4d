// The `ctx.ptcRuntime` services (the host's seam since 0.1.6, `@deepseek-ai/dsh-ptc-runtime`),
// built on a base class: the host's abstract `PtcRuntime`, or this package's own for hosts
// without it (lib/ptc/index.mjs). Each keeps the same backend state as its `ctx.codeRuntime`
// sibling and runs through the same session (lib/session.mjs); what the seam adds is resolve(),
// the per-run deadline, the sandbox facts and the two new failure kinds.
import Schema from 'schemastery'
import { IsolateConfig, createIsolateState, isolateSandbox, runIsolate } from '../isolate-runtime.mjs'
import { PythonConfig, attachPythonState, preparePythonState, runPython } from '../python-runtime.mjs'
import { PREFIX, afterDisposalError, unboundRunError } from '../request.mjs'
import { PTC_SEAM } from '../session.mjs'
import { filePlan, filePolicyAvailable, refusedFileEffect } from './file-plan.mjs'
import { isolateInstructions, pythonInstructions } from './instructions.mjs'
import { NO_DEADLINE_MS, readResolvedSpec, resolveSpec } from './resolve.mjs'
import { PTC_SCHEMA, backendConfig, ptcSettings } from './settings.mjs'

// cordis hands out services through a Proxy: state lives in a symbol-keyed property.
const STATE = Symbol('code-runtime-native.ptc')

/** The backend keys of each class's schema, less `maxWallMs` (a run's deadline is the spec's). */
function schemaWithout(schema, key) {
  const { [key]: _, ...rest } = schema.dict
  return Schema.object({ ...rest, ...PTC_SCHEMA })
}

/**
 * @param {abstract new (ctx: any) => object} Base the host's `PtcRuntime` (its constructor takes
 *   the context and registers `ptcRuntime`) or `PtcService` (lib/ptc/index.mjs)
 */
export function definePtcRuntimes(Base) {
  const Seam = defineSeamRuntime(Base)
  return { IsolatePtcRuntime: defineIsolatePtc(Seam), PythonPtcRuntime: definePythonPtc(Seam) }
}

/** What both languages' runtimes do alike: the timeout, the last run's stats, `resolve`. */
function defineSeamRuntime(Base) {
  class SeamRuntime extends Base {
    get timeout() {
      return this[STATE].settings.timeout
    }

    lastRunStats() {
      return this[STATE].backend.lastStats
    }

    resolve(request) {
      return resolveFor(this[STATE], request)
    }
  }
  return SeamRuntime
}

/** The seam's state of one runtime: the backend's, its settings, and the specs it resolved. */
function ptcState(backend, settings) {
  return { backend, settings, resolved: new WeakSet() }
}

function resolveFor(state, request) {
  if (state.backend.disposed) throw new Error(`${PREFIX}resolve() after disposal`)
  const spec = resolveSpec(request, state.settings)
  state.resolved.add(spec)
  return spec
}

/**
 * The state `run(spec)` works on, after the misuse checks that come before the session's own
 * (bindings, program): a run detached from its runtime, after disposal, of a spec not resolved
 * here.
 */
function stateFor(runtime, spec) {
  const state = runtime?.[STATE]
  if (state === undefined) throw unboundRunError(runtime)
  if (state.backend.disposed) throw afterDisposalError()
  return state
}

/**
 * The spec a run works on: the one this runtime's `resolve()` returned as it is, any other
 * checked field by field as `resolve()` checks a request (README: "Hosts from 0.1.6").
 */
function specFor(state, spec) {
  return state.resolved.has(spec) ? spec : readResolvedSpec(spec, state.settings)
}

/** The run options every backend gets from a spec: the seam's kinds and the spec's deadline. */
function runOptions(spec) {
  return { seam: PTC_SEAM, maxWallMs: spec.timeoutMs ?? NO_DEADLINE_MS }
}

/**
 * The result with its sandbox facts when the spec carried a policy. `enforcement` is absent for
 * `danger-full-access` (nothing confines the files) and for a Python run whose child never
 * started (refused as `sandbox-unavailable`, or a spawn that failed: nothing was applied);
 * `denied` is the program's claim that it was refused a file effect the policy forbids
 * (lib/ptc/file-plan.mjs `refusedFileEffect`), never proof.
 */
function withSandbox(result, policy, facts) {
  if (policy === undefined) return result
  const sandbox = { mode: policy.mode, denied: facts.denied }
  if (facts.enforcement !== undefined) sandbox.enforcement = facts.enforcement
  return { ...result, sandbox }
}

function defineIsolatePtc(Base) {
  class IsolatePtcRuntime extends Base {
    static Config = schemaWithout(IsolateConfig, 'maxWallMs')

    constructor(ctx, config = {}) {
      const settings = ptcSettings(config)
      super(ctx)
      // Its own `maxWallMs` is never used: every run passes the spec's deadline.
      const backend = createIsolateState(ctx, { ...backendConfig(config), maxWallMs: settings.timeout.maxMs })
      this[STATE] = ptcState(backend, settings)
    }

    get language() {
      return 'typescript'
    }

    get isolation() {
      return 'v8-isolate'
    }

    get executionInstructions() {
      return isolateInstructions(this[STATE].backend.config)
    }

    /** Any mode can be passed: a program has no file system under any of them. */
    get sandboxMode() {
      return this[STATE].settings.sandboxMode
    }

    get containment() {
      return this[STATE].backend.config.containment
    }

    get sandbox() {
      return isolateSandbox(this[STATE].backend)
    }

    async run(given) {
      const state = stateFor(this, given)
      const spec = specFor(state, given)
      const result = await runIsolate(state.backend, spec, runOptions(spec))
      const policy = spec.sandboxPolicy
      return withSandbox(result, policy, { denied: false, enforcement: isolateEnforcement(state.backend, policy) })
    }
  }
  return IsolatePtcRuntime
}

/**
 * A program has no file API in any mode, so no file effect can be attempted or denied. `full`
 * when the kernel denies every file effect of the sandbox process as well (its Landlock and
 * seccomp allowlist hold), so an escape from V8 still reaches no file; `partial` where only the
 * isolate itself stands between the program and the files (`containment: 'thread'`, or layers
 * this kernel refuses).
 */
function isolateEnforcement(backend, policy) {
  if (policy === undefined || policy.mode === 'danger-full-access') return undefined
  const layers = isolateSandbox(backend)
  return layers.process && layers.landlock > 0 && layers.seccompAllowlist ? 'full' : 'partial'
}

function definePythonPtc(Base) {
  class PythonPtcRuntime extends Base {
    static Config = schemaWithout(PythonConfig, 'maxWallMs')

    constructor(ctx, config) {
      const settings = ptcSettings(config)
      const backend = preparePythonState({ ...backendConfig(config), maxWallMs: settings.timeout.maxMs })
      super(ctx)
      this[STATE] = ptcState(backend, settings)
      attachPythonState(ctx, backend)
    }

    get language() {
      return 'python'
    }

    get isolation() {
      return 'process'
    }

    get executionInstructions() {
      const { backend } = this[STATE]
      return pythonInstructions(backend.config, backend.interpreter.version, this.sandboxMode)
    }

    /**
     * The configured mode once the native layer enforces file policies on Python runs; until
     * then `undefined`, which tells the host to pass no policy (a confined one is refused).
     */
    get sandboxMode() {
      return filePolicyAvailable(this[STATE].backend) ? this[STATE].settings.sandboxMode : undefined
    }

    get interpreter() {
      return this[STATE].backend.interpreter
    }

    get sandbox() {
      return this[STATE].backend.sandbox
    }

    async run(given) {
      const state = stateFor(this, given)
      const spec = specFor(state, given)
      const options = runOptions(spec)
      const policy = spec.sandboxPolicy
      let enforcement
      let started = false
      if (policy !== undefined) {
        options.started = () => (started = true)
        options.filePolicy = filePlan(policy, spec.cwd)
        if (policy.mode !== 'danger-full-access') {
          if (filePolicyAvailable(state.backend)) enforcement = pythonEnforcement(state.backend, options.filePolicy)
          else options.refuse = { kind: 'sandbox-unavailable', message: unavailable(policy.mode, state.backend.sandbox) }
        }
      }
      const result = await runPython(state.backend, spec, options)
      // A run whose child never started (refused, or failed to spawn) had nothing enforced.
      const denied = policy !== undefined && refusedFileEffect(result, options.filePolicy)
      return withSandbox(result, policy, { denied, enforcement: started ? enforcement : undefined })
    }
  }
  return PythonPtcRuntime
}

/**
 * Landlock, the mount namespace and the run's own root all hold: every rule of the plan is the
 * kernel's. With Landlock alone (no user namespaces) the host's tree is visible and a pathname
 * Unix socket is not mediated: `partial`. A plan without locks needs seccomp as well, which is
 * what refuses them (docs/seam.md#file-locks).
 */
function pythonEnforcement(backend, plan) {
  const { landlock, namespaces, privateRoot, seccomp } = backend.sandbox
  return landlock > 0 && namespaces && privateRoot && (plan.locks || seccomp) ? 'full' : 'partial'
}

function unavailable(mode, sandbox) {
  return (
    `${PREFIX}the ${JSON.stringify(mode)} file policy cannot be enforced on this machine's Python runs: it needs the ` +
    `sandbox helper with Landlock at least (runtime.sandbox has helper: ${sandbox.helper}, landlock: ${sandbox.landlock}), ` +
    'so the program did not run. Repair the helper (README: "The sandbox helper"), run it without a sandboxPolicy ' +
    '(its child then reaches no workspace file at all), or on the TypeScript runtime, which has no file system under any policy.'
  )
}
