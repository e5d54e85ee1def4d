// The `ctx.ptcRuntime` seam (the agent host's since 0.1.6, `@deepseek-ai/dsh-ptc-runtime`): both
// backends as services with resolve(), run(spec), the timeout and sandbox descriptors, and the
// model-facing execution instructions.
import type { Context, Service } from 'cordis'
import type Schema from 'schemastery'
import type {
  CodeBindingNamespace,
  CodeJsonValue,
  CodeRunStats,
  FailureKind,
  IsolateCodeRuntimeConfig,
  PythonCodeRuntimeConfig,
} from '../../index.js'
import type { CodeJournal, CodeSuspension, IsolateSandboxLayers, PythonSandboxLayers } from '../index.js'

/** The file-policy modes of the host's sandbox vocabulary. */
export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access'

/** The file policy of one run, as the host resolved it for the session. */
export interface PtcSandboxPolicy {
  mode: SandboxMode
  /** Absolute root the workspace is: readable under `read-only`, writable under `workspace-write`. */
  workspaceRoot: string
  /** Opaque identity of the calling session. */
  sessionId?: string
}

/** One program to run, before `resolve()` fills the defaults. */
export interface PtcRunRequest {
  /** The program: TypeScript for `IsolatePtcRuntime`, Python for `PythonPtcRuntime`. */
  program: string
  bindings: CodeBindingNamespace[]
  /** Absolute existing directory; default: the runtime's configured `cwd`. */
  cwd?: string
  /**
   * Elapsed deadline in ms: omitted → the configured default, a number → capped at the maximum,
   * `null` → no elapsed deadline (the compute budget, abort and dispose still end the run).
   */
  timeoutMs?: number | null
  /** The session's file policy; without one the result carries no `sandbox` facts. */
  sandboxPolicy?: PtcSandboxPolicy
  /** Aborting ends the run as `{ kind: 'abort', message: String(reason) }`. */
  signal?: AbortSignal
}

/** What `resolve()` returns (frozen), and the only thing `run()` accepts. */
export interface PtcRunSpec extends PtcRunRequest {
  readonly cwd: string
  readonly timeoutMs: number | null
}

/**
 * Why a run failed: the six kinds of `ctx.codeRuntime`, and
 * - `protocol`: a sandbox process or Python child broke the channel protocol;
 * - `sandbox-unavailable`: the policy's confinement cannot be applied here, so nothing ran.
 */
export type PtcRunFailureKind = `${FailureKind}` | 'sandbox-unavailable'

export interface PtcRunFailure {
  kind: PtcRunFailureKind
  message: string
}

/** The file policy a run was under. */
export interface PtcRunSandbox {
  mode: SandboxMode
  /**
   * The program's claim that it was refused a file effect the policy forbids: its uncaught
   * failure is an `OSError`/`PermissionError` (EPERM, EACCES, EROFS) naming a file the plan does
   * not let it write. Not observed by the sandbox: the runner shares the program's process, so a
   * program can raise such an error itself. Never act on it alone (docs/seam.md#denied-the-programs-claim).
   */
  denied: boolean
  /** How completely the policy was enforced; absent under `danger-full-access` and when nothing ran. */
  enforcement?: 'full' | 'partial'
}

/** `{ logs }`, `{ logs, value }` or `{ logs, error }`, with `sandbox` whenever a policy was given. */
export interface PtcRunResult {
  logs: string[]
  value?: CodeJsonValue
  error?: PtcRunFailure
  sandbox?: PtcRunSandbox
}

/**
 * `runDurable(spec, journal?)`'s result (docs/durable.md): `run()`'s plus the journal to keep; a
 * paused run has `suspended` instead of `value`/`error`.
 */
export type PtcDurableResult = (PtcRunResult | { logs: string[]; suspended: CodeSuspension; sandbox?: PtcRunSandbox }) & {
  journal: CodeJournal
}

/** What both backends offer as `ctx.ptcRuntime`. */
export interface PtcRuntime {
  readonly language: 'typescript' | 'python'
  readonly isolation: 'v8-isolate' | 'process'
  /** Model-facing text saying what a program can use (docs/seam.md#descriptors). */
  readonly executionInstructions: string
  /** The elapsed deadline's default and cap, in ms. */
  readonly timeout: Readonly<{ defaultMs: number; maxMs: number }>
  /** The file-policy mode the runtime advertises, or `undefined` when a policy cannot be passed. */
  readonly sandboxMode: SandboxMode | undefined
  /** Fills the defaults and checks every option; throws misuse that names the field. */
  resolve(request: PtcRunRequest): PtcRunSpec
  /** Runs a spec this runtime resolved; rejects only on misuse. */
  run(spec: PtcRunSpec): Promise<PtcRunResult>
  /**
   * Runs a spec durably (docs/durable.md): a binding that throws `suspend(data)` pauses it, and
   * `runDurable(spec, journal)` replays the journal and goes on. Optional: a host's own runtime
   * may not offer it (the adapters then leave tools that need approval out).
   */
  runDurable?(spec: PtcRunSpec, journal?: CodeJournal): Promise<PtcDurableResult>
  lastRunStats(): CodeRunStats | undefined
}

/** The keys the seam adds to a backend's config. */
export interface PtcSeamConfig {
  /** Elapsed deadline of a request that names none, ms. Default 120000. */
  timeoutMs?: number
  /** Cap of a request's numeric `timeoutMs`, ms (at most 2147483647). Default 600000. */
  maxTimeoutMs?: number
  /** Working directory of a request that names none: absolute, existing. Default: `process.cwd()` at load. */
  cwd?: string
  /**
   * The largest binding call's arguments or binding reply, in bytes of JSON, and the cap of the
   * arguments of the calls in flight together; past it the run ends `protocol`. Default 134217728.
   */
  maxMessageBytes?: number
}

export type IsolatePtcRuntimeConfig = Omit<IsolateCodeRuntimeConfig, 'maxWallMs'> &
  PtcSeamConfig & {
    /** Accepted for the host's Node backend's config (checked, positive ms); a sandbox process needs no grace. */
    graceMs?: number
    /** Refused: a program has no file system, so the TypeScript runtime advertises no mode. */
    sandboxMode?: never
  }
export type PythonPtcRuntimeConfig = Omit<PythonCodeRuntimeConfig, 'maxWallMs'> &
  PtcSeamConfig & {
    /** The mode advertised on a host without `ctx.sandboxPolicy` (with it: its `defaultMode`). Default `'read-only'`. */
    sandboxMode?: SandboxMode
  }

/** TypeScript programs, each in a fresh V8 isolate. */
export declare class IsolatePtcRuntime extends Service implements PtcRuntime {
  static Config: Schema<IsolatePtcRuntimeConfig>
  constructor(ctx: Context, config?: IsolatePtcRuntimeConfig)
  readonly language: 'typescript'
  readonly isolation: 'v8-isolate'
  readonly executionInstructions: string
  readonly timeout: Readonly<{ defaultMs: number; maxMs: number }>
  /** None: a program has no file system under any mode (a policy passed anyway is reported). */
  readonly sandboxMode: undefined
  readonly containment: 'process' | 'thread'
  readonly sandbox: IsolateSandboxLayers
  resolve(request: PtcRunRequest): PtcRunSpec
  run(spec: PtcRunSpec): Promise<PtcRunResult>
  runDurable(spec: PtcRunSpec, journal?: CodeJournal): Promise<PtcDurableResult>
  lastRunStats(): CodeRunStats | undefined
}

/** Python programs, each in a fresh `python3 -I` subprocess. */
export declare class PythonPtcRuntime extends Service implements PtcRuntime {
  static Config: Schema<PythonPtcRuntimeConfig>
  constructor(ctx: Context, config?: PythonPtcRuntimeConfig)
  readonly language: 'python'
  readonly isolation: 'process'
  readonly executionInstructions: string
  readonly timeout: Readonly<{ defaultMs: number; maxMs: number }>
  /**
   * The host's `ctx.sandboxPolicy.defaultMode` (the configured mode without that service);
   * `undefined` where this machine cannot enforce a file policy on Python runs.
   */
  readonly sandboxMode: SandboxMode | undefined
  readonly interpreter: Readonly<{ resolved: string; executable: string; version: string }>
  readonly sandbox: PythonSandboxLayers
  resolve(request: PtcRunRequest): PtcRunSpec
  run(spec: PtcRunSpec): Promise<PtcRunResult>
  runDurable(spec: PtcRunSpec, journal?: CodeJournal): Promise<PtcDurableResult>
  lastRunStats(): CodeRunStats | undefined
}

/** The standalone classes' base: a cordis Service registering `ptcRuntime`. */
export declare class PtcService extends Service {
  constructor(ctx: Context)
}

/** A base class the `ctx.ptcRuntime` classes can extend: its constructor takes the context. */
export type PtcRuntimeBase = abstract new (ctx: any) => object

/**
 * Builds both classes on the host's abstract `PtcRuntime` (or any base taking the context); they
 * take the context the base takes (the host's own cordis build).
 */
export declare function definePtcRuntimes<B extends PtcRuntimeBase>(Base: B): {
  IsolatePtcRuntime: {
    new (ctx: ConstructorParameters<B>[0], config?: IsolatePtcRuntimeConfig): InstanceType<B> & PtcRuntime & {
      readonly language: 'typescript'
      readonly isolation: 'v8-isolate'
    }
    Config: Schema<IsolatePtcRuntimeConfig>
  }
  PythonPtcRuntime: {
    new (ctx: ConstructorParameters<B>[0], config?: PythonPtcRuntimeConfig): InstanceType<B> & PtcRuntime & {
      readonly language: 'python'
      readonly isolation: 'process'
    }
    Config: Schema<PythonPtcRuntimeConfig>
  }
}

/** The file access a policy gives a Python run (docs/seam.md#python-and-file-policies). */
export interface FilePlan {
  cwd: string
  readOnly: string[]
  readWrite: string[]
  network: boolean
}

export declare function filePlan(policy: Pick<PtcSandboxPolicy, 'mode' | 'workspaceRoot'>, cwd: string): FilePlan

export default IsolatePtcRuntime

declare module 'cordis' {
  interface Context {
    ptcRuntime: PtcRuntime
  }
}
