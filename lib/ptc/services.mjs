// The `ctx.ptcRuntime` services (the host's seam since 0.1.6, `@deepseek-ai/dsh-ptc-runtime`),
// built on a base class: the host's abstract `PtcRuntime`, or this package's own for hosts
// without it (lib/ptc/index.mjs). Each keeps the same backend state as its `ctx.codeRuntime`
// sibling and runs through the same session (lib/session.mjs); what the seam adds is resolve(),
// the per-run deadline, the sandbox facts and the two new failure kinds.
import Schema from 'schemastery'
import { IsolateConfig, createIsolateState, isolateSandbox, runIsolate, runIsolateDurable } from '../isolate-runtime.mjs'
import { PythonConfig, attachPythonState, disposePythonState, preparePythonState, runPython, runPythonDurable } from '../python-runtime.mjs'
import { PREFIX, afterDisposalError, unboundRunError } from '../request.mjs'
import { PTC_SEAM } from '../session.mjs'
import { unshadowed } from '../unshadowed.mjs'
import { filePlan, filePolicyAvailable, refusedFileEffect } from './file-plan.mjs'
import { isolateInstructions, pythonInstructions } from './instructions.mjs'
import { NO_DEADLINE_MS, readResolvedSpec, resolveSpec } from './resolve.mjs'
import { ISOLATE_PTC_SCHEMA, PYTHON_PTC_SCHEMA, backendConfig, ptcSettings } from './settings.mjs'

// cordis hands out services through a Proxy: state lives in a symbol-keyed property.
const STATE = Symbol('code-runtime-native.ptc')

/** The backend keys of each class's schema, less `maxWallMs` (a run's deadline is the spec's). */
function schemaWithout(schema, key, seamKeys) {
  const { [key]: _, ...rest } = schema.dict
  return Schema.object({ ...rest, ...seamKeys })
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
      const state = this[STATE]
      if (state.backend.disposed) throw new Error(`${PREFIX}resolve() after disposal`)
      const spec = resolveSpec(request, state.settings, () => this.standingPolicy())
      state.resolved.add(spec)
      return spec
    }

    /** The policy resolve() fills in for a request that names none: none by default. */
    standingPolicy() {
      return undefined
    }
  }
  return SeamRuntime
}

/**
 * The seam's state of one runtime: the backend's, its settings, the specs it resolved, and its
 * context (where the host's `ctx.sandboxPolicy` is looked up, when it is asked for).
 */
function ptcState(backend, settings, ctx) {
  return { backend, settings, ctx, resolved: new WeakSet() }
}

/** The host's policy service (`@deepseek-ai/dsh-sandbox-policy`), if the host has one. */
function hostPolicyService(state) {
  const service = state.ctx?.get?.('sandboxPolicy')
  return service !== null && typeof service === 'object' ? service : undefined
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
 * checked field by field as `resolve()` checks a request (docs/seam.md#runspec).
 */
function specFor(state, spec) {
  return state.resolved.has(spec) ? spec : readResolvedSpec(spec, state.settings)
}

/**
 * The run options every backend gets from a spec: the seam's kinds and texts, the spec's
 * deadline, the message cap, and the hook that tells a run that started from one that did not.
 */
function runOptions(state, spec) {
  return {
    seam: PTC_SEAM,
    maxWallMs: spec.timeoutMs ?? NO_DEADLINE_MS,
    maxMessageBytes: state.settings.maxMessageBytes,
  }
}

/**
 * The result with its sandbox facts when the spec carried a policy. `enforcement` is absent for
 * `danger-full-access` (nothing confines the files) and for a run that never started (a signal
 * aborted before it, a Python run refused as `sandbox-unavailable` or whose spawn failed):
 * nothing was applied, as the host's own backends report a run that failed before confinement;
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
    static Config = schemaWithout(IsolateConfig, 'maxWallMs', ISOLATE_PTC_SCHEMA)

    constructor(ctx, config = {}) {
      const settings = ptcSettings(config, 'typescript')
      super(ctx)
      unshadowed(this)
      // Its own `maxWallMs` is never used: every run passes the spec's deadline.
      const { graceMs, ...own } = backendConfig(config)
      const backend = createIsolateState(ctx, { ...own, maxWallMs: settings.timeout.maxMs })
      this[STATE] = ptcState(backend, settings, ctx)
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

    /**
     * None: a program has no file system under any mode, so there is nothing to escalate and the
     * host offers the model no `sandbox_permissions`. A policy passed anyway (the host's workflow
     * engine passes its session's) is accepted and reported in `result.sandbox`.
     */
    get sandboxMode() {
      return undefined
    }

    get containment() {
      return this[STATE].backend.config.containment
    }

    get sandbox() {
      return isolateSandbox(this[STATE].backend)
    }

    run(given) {
      return isolateAttempt(this, given, runIsolate)
    }

    /**
     * `run(spec)` durably (docs/durable.md#ctxptcruntime-and-the-adapters): its result plus
     * `journal`, or `suspended` when a binding threw `suspend(data)`; `runDurable(spec, journal)`
     * replays the journal and goes on from there.
     */
    runDurable(given, journal) {
      return isolateAttempt(this, given, (backend, spec, options) => runIsolateDurable(backend, { ...spec, journal }, options))
    }
  }
  return IsolatePtcRuntime
}

/** One run of a TypeScript spec by `attempt` (`runIsolate`, or its durable twin). */
async function isolateAttempt(runtime, given, attempt) {
  const state = stateFor(runtime, given)
  const spec = specFor(state, given)
  const options = runOptions(state, spec)
  let started = false
  options.started = () => (started = true)
  const result = await attempt(state.backend, spec, options)
  const policy = spec.sandboxPolicy
  const enforcement = started ? isolateEnforcement(state.backend, policy) : undefined
  return withSandbox(result, policy, { denied: false, enforcement })
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
    static Config = schemaWithout(PythonConfig, 'maxWallMs', PYTHON_PTC_SCHEMA)

    constructor(ctx, config) {
      const settings = ptcSettings(config, 'python')
      const backend = preparePythonState({ ...backendConfig(config), maxWallMs: settings.timeout.maxMs })
      try {
        super(ctx)
        unshadowed(this)
        this[STATE] = ptcState(backend, settings, ctx)
      } catch (error) {
        disposePythonState(backend)
        throw error
      }
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
     * Where the kernel enforces file policies on Python runs, the host's deployment default
     * (`ctx.sandboxPolicy.defaultMode`, as the host's own backend advertises), or the configured
     * mode on a host without that service. Elsewhere `undefined`, which tells the host to pass no
     * policy (a confined one is refused).
     */
    get sandboxMode() {
      const state = this[STATE]
      if (!filePolicyAvailable(state.backend)) return undefined
      return hostPolicyService(state)?.defaultMode ?? state.settings.sandboxMode
    }

    /**
     * A request without a policy runs under the host's standing one where a mode is advertised:
     * `ctx.sandboxPolicy.resolve()` (its default mode and workspace), as the host's own backend
     * fills it. Without that service nothing is filled: no workspace is named, so none is granted.
     */
    standingPolicy() {
      const state = this[STATE]
      if (this.sandboxMode === undefined) return undefined
      return hostPolicyService(state)?.resolve()
    }

    get interpreter() {
      return this[STATE].backend.interpreter
    }

    get sandbox() {
      return this[STATE].backend.sandbox
    }

    run(given) {
      return pythonAttempt(this, given, runPython)
    }

    /** `run(spec)` durably, as IsolatePtcRuntime's `runDurable(spec, journal)`. */
    runDurable(given, journal) {
      return pythonAttempt(this, given, (backend, spec, options) => runPythonDurable(backend, { ...spec, journal }, options))
    }
  }
  return PythonPtcRuntime
}

/** One run of a Python spec by `attempt` (`runPython`, or its durable twin), under its file policy. */
async function pythonAttempt(runtime, given, attempt) {
  const state = stateFor(runtime, given)
  const spec = specFor(state, given)
  const options = runOptions(state, spec)
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
  const result = await attempt(state.backend, spec, options)
  // A run whose child never started (refused, or failed to spawn) had nothing enforced.
  const denied = policy !== undefined && refusedFileEffect(result, options.filePolicy, state.backend.ownRoot)
  return withSandbox(result, policy, { denied, enforcement: started ? enforcement : undefined })
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
    'so the program did not run. Repair the helper (docs/sandbox.md#the-sandbox-helper), run it without a sandboxPolicy ' +
    '(its child then reaches no workspace file at all), or on the TypeScript runtime, which has no file system under any policy.'
  )
}
