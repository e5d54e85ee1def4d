// Public API of code-runtime-native: both backends as cordis services registering `ctx.codeRuntime`
// (hosts up to 0.1.5) and `ctx.ptcRuntime` (hosts from 0.1.6, lib/ptc/index.d.ts).
import type { Context, Service } from 'cordis'
import type Schema from 'schemastery'
import type {
  CodeJsonValue,
  CodeRunRequest,
  CodeRunResult,
  CodeRunStats,
  IsolateCodeRuntimeConfig,
  IsolateSandboxLayers as NativeIsolateSandboxLayers,
  PythonSandbox as NativePythonSandbox,
  PythonCodeRuntimeConfig,
} from '../index.js'

export type {
  CodeBindingErrorClass,
  CodeBindingNamespace,
  CodeCallRecord,
  CodeJsonValue,
  CodeRuntimeTracer,
  CodeRuntimeTracingConfig,
  CodeStoppedAt,
  CodeRunFailure,
  CodeRunFailureKind,
  CodeRunRequest,
  CodeRunResult,
  CodeRunStats,
  IsolateCodeRuntimeConfig,
  PythonCodeRuntimeConfig,
} from '../index.js'

/** The layers around a TypeScript runtime's isolates (`IsolateCodeRuntime.sandbox`). */
export type IsolateSandboxLayers = Readonly<NativeIsolateSandboxLayers>

/** The layers around a Python runtime's children (`PythonCodeRuntime.sandbox`). */
export type PythonSandboxLayers = Readonly<{ process: true } & NativePythonSandbox>

/** What every backend offers as `ctx.codeRuntime`. */
export interface CodeRuntime {
  /** Chooses the SDK renderer of the consumer. */
  readonly language: 'typescript' | 'python'
  readonly isolation: 'v8-isolate' | 'process'
  /**
   * Runs one program. Every program outcome resolves (failures in `error`); the promise rejects
   * only on seam misuse: after disposal, or for invalid binding declarations.
   */
  run(request: CodeRunRequest): Promise<CodeRunResult>
  /**
   * Runs one program durably (docs/durable.md): its binding calls are journaled, a binding that
   * throws `suspend(data)` pauses it, and `runDurable({ ...request, journal })` replays the
   * journal and goes on from there. Rejects on misuse, and for a journal that is malformed or
   * larger than `MAX_JOURNAL_BYTES`.
   */
  runDurable(request: CodeDurableRequest): Promise<CodeDurableResult>
  /** Stats of the most recently settled run, or `undefined` before any run. */
  lastRunStats(): CodeRunStats | undefined
}

/** A journal entry: one binding call the host answered, by its number in the program's order. */
export type CodeJournalCall =
  | { seq: number; name: string; args: CodeJsonValue; ok: true; value: CodeJsonValue }
  | { seq: number; name: string; args: CodeJsonValue; ok: false; message: string }

/** What `runDurable()` returns to keep, and takes back on resume: plain JSON, stored as it is. */
export interface CodeJournal {
  version: 2
  /** What the run's randomness is drawn from: 16 lowercase hexadecimal digits. */
  seed: string
  /** The run's clock at its start, in milliseconds since the epoch (docs/durable.md#determinism). */
  clock: number
  /** The time zone and locale its programs saw (`"UTC en-US"`); `null` when not known. */
  zone: string | null
  calls: CodeJournalCall[]
  /** The log entries of the attempt that returned it (not streamed again on resume). */
  logs: string[]
}

export interface CodeDurableRequest extends CodeRunRequest {
  /** The journal a previous attempt returned; absent for the first attempt. */
  journal?: CodeJournal
}

/** Where a durable run paused: the call whose binding threw `suspend(data)`. */
export interface CodeSuspension {
  readonly seq: number
  readonly name: string
  readonly args: CodeJsonValue
  readonly data: CodeJsonValue
}

/** `run()`'s result with the journal; a paused run has `suspended` instead of `value`/`error`. */
export type CodeDurableResult = (CodeRunResult | { logs: string[]; suspended: CodeSuspension }) & { journal: CodeJournal }

/** Thrown (or rejected with) by a binding to pause a durable run: `throw suspend({ approvalId })`. */
export declare class RunSuspension extends Error {
  readonly data: CodeJsonValue
}
/** The error a binding throws to pause `runDurable()`; `data` must be lossless JSON. */
export declare function suspend(data?: CodeJsonValue): RunSuspension
/** The journal format `runDurable()` writes and reads. */
export declare const JOURNAL_VERSION: 2
/** A journal's size at most, in bytes of JSON. */
export declare const MAX_JOURNAL_BYTES: number

/** TypeScript programs, each in a fresh V8 isolate on a thread of its own. */
export declare class IsolateCodeRuntime extends Service implements CodeRuntime {
  static Config: Schema<IsolateCodeRuntimeConfig>
  readonly language: 'typescript'
  readonly isolation: 'v8-isolate'
  /** Throws synchronously when the config is invalid, so `ctx.plugin` rejects. */
  constructor(ctx: Context, config?: IsolateCodeRuntimeConfig)
  /** The containment in effect: the configured one, or the default for this platform. */
  readonly containment: 'process' | 'thread'
  /**
   * Which layers hold around the isolates, as the first sandbox process reported them (`'thread'`:
   * `process: false` and nothing else): the helper, new user/PID/mount/network/IPC namespaces, the
   * enforced Landlock ABI (0 when absent), the seccomp deny-list the helper applies, the seccomp
   * allowlist the process applies to every thread once V8 runs, a process cap, a memory cgroup
   * (the supervisor reads each process's resident memory either way), a root of its own (bind
   * mounts of the loader's files and the addon only), and the uid it has outside its namespaces.
   */
  readonly sandbox: IsolateSandboxLayers
  run(request: CodeRunRequest): Promise<CodeRunResult>
  runDurable(request: CodeDurableRequest): Promise<CodeDurableResult>
  lastRunStats(): CodeRunStats | undefined
}

export declare namespace IsolateCodeRuntime {
  type Config = IsolateCodeRuntimeConfig
}

/** Python programs, each in a fresh `python3 -I` subprocess with rlimits and group teardown. */
export declare class PythonCodeRuntime extends Service implements CodeRuntime {
  static Config: Schema<PythonCodeRuntimeConfig>
  readonly language: 'python'
  readonly isolation: 'process'
  /** Validates the config and probes the interpreter; throws synchronously when either fails. */
  constructor(ctx: Context, config?: PythonCodeRuntimeConfig)
  /**
   * The interpreter resolved and probed at load: the `pythonBin` it resolved to, the real
   * executable runs spawn (`sys.executable`, so a pyenv/asdf shim is bypassed), and its version.
   */
  readonly interpreter: Readonly<{ resolved: string; executable: string; version: string }>
  /**
   * Which kernel layers hold around each child on this machine, measured at load by one child
   * spawned as runs are: the sandbox helper was found, new user/PID/mount/network/IPC namespaces,
   * the enforced Landlock ABI (0 when absent), the seccomp filter, a per-run process cap, a root
   * of its own (docs/sandbox.md#the-filesystem-a-child-sees), the uid it has outside its namespaces
   * (absent without the helper), and a memory cgroup capping each run as a whole.
   */
  readonly sandbox: PythonSandboxLayers
  run(request: CodeRunRequest): Promise<CodeRunResult>
  runDurable(request: CodeDurableRequest): Promise<CodeDurableResult>
  lastRunStats(): CodeRunStats | undefined
}

export declare namespace PythonCodeRuntime {
  type Config = PythonCodeRuntimeConfig
}

/** A base class the classes can extend: cordis `Service`, or a host's own abstract service class. */
export type CodeRuntimeBase = abstract new (ctx: Context, name: string) => object

/**
 * Builds both service classes on the host's base class (for hosts with their own cordis build and
 * abstract `CodeRuntime`). The classes call `super(ctx, 'codeRuntime')`.
 */
export declare function defineCodeRuntimes<B extends CodeRuntimeBase>(Base: B): {
  IsolateCodeRuntime: {
    new (ctx: Context, config?: IsolateCodeRuntimeConfig): InstanceType<B> & CodeRuntime & {
      readonly language: 'typescript'
      readonly isolation: 'v8-isolate'
    }
    Config: Schema<IsolateCodeRuntimeConfig>
  }
  PythonCodeRuntime: {
    new (ctx: Context, config?: PythonCodeRuntimeConfig): InstanceType<B> & CodeRuntime & {
      readonly language: 'python'
      readonly isolation: 'process'
    }
    Config: Schema<PythonCodeRuntimeConfig>
  }
}

// The current seam, `ctx.ptcRuntime` (also the `code-runtime-native/ptc` subpath).
export { IsolatePtcRuntime, PythonPtcRuntime, definePtcRuntimes } from './ptc/index.js'
export type {
  FilePlan,
  IsolatePtcRuntimeConfig,
  PtcRunFailure,
  PtcRunFailureKind,
  PtcRunRequest,
  PtcRunResult,
  PtcRunSandbox,
  PtcRunSpec,
  PtcRuntime,
  PtcRuntimeBase,
  PtcSandboxPolicy,
  PtcSeamConfig,
  PythonPtcRuntimeConfig,
  SandboxMode,
} from './ptc/index.js'

/** ECMAScript reserved words plus Python keywords; no injected name may be one of them. */
export declare const PORTABLE_RESERVED_WORDS: ReadonlySet<string>
/** Names the runtimes own in program scope. */
export declare const RESERVED_BINDING_GLOBALS: ReadonlySet<string>
/** Error members a typed error class may not use for the failed function's name. */
export declare const RESERVED_ERROR_MEMBERS: ReadonlySet<string>
/** `/^__.+__$/`: dunder names, also refused as error member properties. */
export declare const DUNDER_MEMBER: RegExp

export default IsolateCodeRuntime

declare module 'cordis' {
  interface Context {
    codeRuntime: CodeRuntime
  }
}
