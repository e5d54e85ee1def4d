/* code-runtime-native: the public shapes of the code-runtime seam (docs/seam.md#result-shape). */

/** A value that survives a JSON round trip exactly: no information dropped, coerced or invented. */
export type CodeJsonValue =
  | null
  | boolean
  | number
  | string
  | CodeJsonValue[]
  | { [key: string]: CodeJsonValue }

/** A typed error class injected into the program for one namespace. */
export interface CodeBindingErrorClass {
  /** The class name the program sees, e.g. `'ToolCallError'`. */
  name: string
  /** The instance property holding the failed function's unqualified name, e.g. `'toolName'`. */
  memberNameProperty: string
}

/** One namespace of async host functions, injected into the program under `global`. */
export interface CodeBindingNamespace {
  /** The name the program sees, e.g. `'tools'`: a portable identifier, not a reserved word. */
  global: string
  /** The host functions; each is called with exactly one lossless-JSON argument. */
  functions: Record<string, (args: unknown) => Promise<CodeJsonValue> | CodeJsonValue>
  /** When present, failed calls reject with an instance of this class instead of a plain Error. */
  errorClass?: CodeBindingErrorClass
}

/** Cost of a run, reported by `onStats` and `lastRunStats()`. */
export interface CodeRunStats {
  /**
   * CPU time of the substrate: the isolate thread, or the Python process's rusage. A sandbox
   * process killed after its run's end was claimed (a budget, an abort) reports it as of the
   * claim; one killed without a claim (its memory cap, a crash), as the host read the process's.
   */
  cpuMs: number
  wallMs: number
  /**
   * Isolate heap in use at the end of the run (0 when no isolate was created); for a killed
   * sandbox process, as last seen (the run's start, or its last garbage collection).
   */
  heapUsedBytes?: number
  /** Isolate heap committed at the end of the run (or as last seen), an upper bound of its peak use. */
  heapPeakBytes?: number
  /** Python child's peak resident set size. */
  maxRssBytes?: number
  /**
   * Where the program was when a budget, an abort or a protocol breach stopped it while its code
   * ran (TypeScript in both tiers, Python): its innermost frame, in the program's own
   * coordinates (docs/tracing.md#where-a-run-stopped).
   * TypeScript's heap cap included. Absent when it was waiting (on a binding, a timer), and for
   * every other end.
   */
  stoppedAt?: CodeStoppedAt
  /**
   * The run's binding calls, in the order the program made them: the first 1000
   * (docs/tracing.md#statscalls). Calls the runtime answered itself (arguments that are not
   * lossless JSON, a name that is not bound) are not among them.
   */
  calls: readonly CodeCallRecord[]
  /** How many binding calls reached the host, recorded or not. */
  callCount: number
}

/** `CodeRunStats.stoppedAt`: a frame of the program. */
export interface CodeStoppedAt {
  /** 1-based, as the program's own text counts them (TypeScript annotations included). */
  line: number
  column: number
  /** The function's name, when it has one (at most 200 characters). */
  functionName?: string
}

/** What happened to one binding call (`CodeRunStats.calls`). */
export interface CodeCallRecord {
  /** 1 for the run's first call, in the order the program made them (stable under `Promise.all`). */
  readonly seq: number
  /** `'<global>.<function>'`, e.g. `'tools.search'`. */
  readonly name: string
  /** When the call reached the host, in ms since `run()` was called. */
  readonly startedMs: number
  /** When the host's function settled, if it did before the run ended. */
  readonly settledMs?: number
  /**
   * What the program was given: the value, a rejection, or nothing because the run ended first
   * (`abandoned`, whatever the host's function did later).
   */
  readonly outcome: 'resolved' | 'rejected' | 'abandoned'
  /** UTF-8 bytes of the arguments' JSON as the program sent them. */
  readonly argBytes: number
  /** UTF-8 bytes of the reply's JSON (the value, or the failure message as a JSON string); 0 when abandoned. */
  readonly resultBytes: number
}

/**
 * An OpenTelemetry `Tracer` (`@opentelemetry/api`), as far as a runtime uses it: the package
 * itself is an optional peer dependency, loaded only when a config names a tracer.
 */
export interface CodeRuntimeTracer {
  startSpan(name: string, options?: object, context?: unknown): unknown
}

/** The tracing keys of every runtime's config (docs/tracing.md). */
export interface CodeRuntimeTracingConfig {
  /**
   * A span per run (`code-runtime-native.run`, parented on the context active at `run()`) and one
   * per binding call (`execute_tool <name>`, its child), inside which the host's function runs.
   */
  tracer?: CodeRuntimeTracer
  /** Record calls' arguments, results and failure messages, and runs' failure messages, on the spans. Default false. */
  traceContent?: boolean
}

/** One program to run. */
export interface CodeRunRequest {
  /** The program: TypeScript for `IsolateCodeRuntime`, Python for `PythonCodeRuntime`. */
  program: string
  bindings: CodeBindingNamespace[]
  /** Aborting ends the run as `{ kind: 'abort', message: String(reason) }`. */
  signal?: AbortSignal
  /** Live output: called once per admitted log entry, in order, before `run()` resolves. */
  onLog?: (text: string) => void
  /** Called once with the run's cost, just before the result resolves. */
  onStats?: (stats: CodeRunStats) => void
}

/**
 * Why a run failed:
 * - `exception`: the program failed by itself (throw, rejection, syntax or strip error);
 * - `timeout`: the compute/CPU budget or the wall-clock ceiling ran out;
 * - `abort`: the signal fired, or the runtime was disposed mid-run;
 * - `worker-exit`: the substrate died or was cut off (heap cap, `process.exit`, protocol breach);
 * - `invalid-output`: the completion value is not lossless JSON;
 * - `output-limit`: the output byte budget was exceeded.
 *
 * Spelled once, by the native `FailureKind` enum (src/outcome.rs) declared below in this file,
 * whose `protocol` marks a protocol breach this seam reports as `worker-exit` (and whose
 * `sandbox-unavailable` only a `ctx.ptcRuntime` run with a file policy can end with).
 */
export type CodeRunFailureKind = Exclude<`${FailureKind}`, 'protocol' | 'sandbox-unavailable'>

export interface CodeRunFailure {
  kind: CodeRunFailureKind
  message: string
}

/**
 * What a run printed and returned. Exactly one of these shapes:
 * `{ logs }` (returned nothing), `{ logs, value }`, `{ logs, error }`.
 */
export interface CodeRunResult {
  logs: string[]
  value?: CodeJsonValue
  error?: CodeRunFailure
}

/** `IsolateCodeRuntime` config (docs/typescript.md#config); every key is optional. */
export interface IsolateCodeRuntimeConfig extends CodeRuntimeTracingConfig {
  /** Compute budget in ms: CPU time of the isolate's thread. Default 60000. */
  computeMs?: number
  /** Wall-clock ceiling in ms, at most 2147483647. Default 600000. */
  maxWallMs?: number
  /** Combined output budget in bytes (logs + value or error message), at least 4. Default 67108864. */
  maxOutputBytes?: number
  /** Heap cap of each isolate in MiB; ArrayBuffer memory has the same cap. Default 512. */
  maxOldGenerationSizeMb?: number
  /**
   * Binding calls a run may have in flight at once, from 1 to 65536. One more ends the run:
   * `protocol` on `ctx.ptcRuntime`, `worker-exit` on `ctx.codeRuntime`
   * (docs/budgets-and-ledger.md#the-hosts-memory). Default 128, the host's own.
   */
  maxPendingCalls?: number
  /**
   * Where isolates run. `'process'` (the default where the sandbox helper ships, Linux): in
   * supervised sandbox processes the host can always kill, so V8 fatal errors, uninterruptible
   * built-ins and native memory end only that run. `'thread'`: on threads of the host process, for
   * trusted code and platforms without the helper (docs/typescript.md#containment: what it cannot contain).
   */
  containment?: 'process' | 'thread'
  /** Sandbox processes at most (`'process'`); runs beyond wait in FIFO order. Default cores + 1. */
  maxProcesses?: number
  /**
   * Runs one sandbox process serves before it is replaced (`'process'`). Default 1: a program that
   * compromised its process never sees another run. Above 1 reuses processes (faster back to
   * back) and is for trusted workloads only (docs/typescript.md#containment).
   */
  maxRunsPerProcess?: number
  /** The ids a root host's sandbox processes have (`'process'`). Default nobody (docs/typescript.md#config). */
  runAs?: SandboxRunAs
  /**
   * Where the platform ships the sandbox helper (Linux), loading fails when it is missing or
   * unusable (not executable, does not start), with the repair in the message. `true` loads
   * anyway when no containment is configured: isolates then run on host threads, as with
   * `'thread'`, and `sandbox` says so. An explicit `containment: 'process'` still needs the
   * helper. Default false.
   */
  allowUnsandboxed?: boolean
}

/**
 * The uid and gid a root host's sandboxed children have outside their namespaces, so nothing a
 * run reaches sees the host's privilege (integers from 1 to 4294967294; default nobody, 65534).
 * Unused on a host that is not root: its children have the host's own ids.
 */
export interface SandboxRunAs {
  uid: number
  gid: number
}

/** `PythonCodeRuntime` config (docs/python.md#load-time-validation); every key is optional. */
export interface PythonCodeRuntimeConfig extends CodeRuntimeTracingConfig {
  /** RLIMIT_CPU soft limit in seconds (hard = soft + 1). Default 60. */
  cpuSeconds?: number
  /** Wall-clock ceiling in ms, covering boot. Default 600000. */
  maxWallMs?: number
  /** RLIMIT_AS in MiB (not applied on macOS). Default 512. */
  addressSpaceMb?: number
  /** Log byte budget shared by every log channel, at least 64. Default 65536. */
  maxLogBytes?: number
  /** Byte budget of the completion value; also caps error messages. Default 32768. */
  maxValueBytes?: number
  /** Delay between SIGTERM and SIGKILL of the process group. Default 3000. */
  graceMs?: number
  /**
   * Binding calls a run may have in flight at once, from 1 to 65536. One more ends the run:
   * `protocol` on `ctx.ptcRuntime`, `worker-exit` on `ctx.codeRuntime`
   * (docs/budgets-and-ledger.md#the-hosts-memory). Default 128, the host's own.
   */
  maxPendingCalls?: number
  /** Interpreter: absolute path, relative path, or a basename looked up on PATH. Default 'python3'. */
  pythonBin?: string
  /** The ids a root host's children have. Default nobody (docs/python.md#config). */
  runAs?: SandboxRunAs
  /**
   * Where the platform ships the sandbox helper (Linux), loading fails when it is missing or
   * unusable (not executable, does not start), with the repair in the message. `true` loads
   * anyway: children then run without the helper's layers, and `sandbox` says which hold. An
   * executable file there that does not start still fails the load (every run would start
   * through it): remove it. Default false.
   */
  allowUnsandboxed?: boolean
}


/**
 * Which binding artifact the generated loader actually loaded: `'native'` for
 * a native addon, otherwise the `platformArchABI` of the WASI flavor. Every
 * flavor napi-rs can build is listed, because `NAPI_RS_NATIVE_LIBRARY_PATH`
 * can point the loader at a WASI artifact this package does not build itself.
 */
export declare const __napiBindingTarget: 'native' | 'wasm32-wasi' | 'wasm32-wasip1'

/** A contained run in flight. */
export declare class ContainedIsolateRun {
  /** Ends the run with this message, unless it already ended: as `abort`, or as `kind`. */
  abort(message: string, kind?: FailureKind | undefined | null): void
  /**
   * Delivers a binding call's outcome (see `IsolateRun.reply`); dropped once the run is being
   * aborted (abort wins: the program never sees a settlement the host made after it).
   */
  reply(id: number, ok: boolean, json: string): void
  /**
   * Joins the supervisor thread if it has finished (or, with `wait`, once it has); returns
   * whether it is joined. After Done the thread only hands its process back once the next
   * isolate is prepared, which no run should wait for: the runtime joins it later.
   */
  join(wait?: boolean | undefined | null): boolean
}

/**
 * The entries of a report with many: `take(into, max)` moves them into an array a slice at a
 * time, so each turn of Node's event loop builds only a slice.
 */
export declare class IsolateLogs {
  /** How many entries there are in all. */
  get length(): number
  /**
   * Stores the next `max` entries at their indices of `into` (created with `length`
   * elements); returns whether entries remain. The entries' memory goes with the last slice.
   */
  take(into: unknown[], max: number): boolean
}

/** The sandbox processes of one runtime. */
export declare class IsolatePool {
  constructor(options: IsolatePoolOptions)
  /** What holds around the isolates; waits for the first process to start. */
  sandbox(): IsolateSandboxLayers
  /** Kills every idle process and returns once none of this pool's processes is left. */
  close(): void
}

/** A run in flight. Dropping it does not stop the run; `abort`/`dispose` do. */
export declare class IsolateRun {
  /**
   * Ends the run with this message, unless it already ended: as `abort`, or as `kind` (the
   * JavaScript layer fails a run its own glue broke as `worker-exit`).
   */
  abort(message: string, kind?: FailureKind | undefined | null): void
  /**
   * Delivers a binding call's outcome: the JSON of its resolution (`ok`) or of its failure
   * message. Dropped once the run's end is decided (an abort claims it at once).
   */
  reply(id: number, ok: boolean, json: string): void
  /**
   * Joins the run's thread if it has finished (or, with `wait`, once it has); returns whether
   * it is joined. Called after the Done event, after which the thread only tears its isolate
   * down, which no run should wait for: the runtime joins it later.
   */
  join(wait?: boolean | undefined | null): boolean
}

/**
 * An isolate waiting on its thread for the run that takes it. Disposing or dropping it ends
 * the thread without a run.
 */
export declare class IsolateSpare {
  /** Whether a run took it. */
  get taken(): boolean
  /**
   * How many milliseconds preparing it took, once it is prepared: how soon before a run the
   * next must be started to be ready for it.
   */
  get prepareMs(): number | null
  /**
   * Ends the spare's thread and waits for it (its isolate torn down). A taken spare has
   * nothing left to end.
   */
  dispose(): void
}

/** The child's modules compiled once per load by the chosen interpreter. */
export declare class PythonPycache {
  /** Relative paths of the cached files, e.g. `__pycache__/protocol.cpython-311.pyc`. */
  get files(): Array<string>
}

/** One run. Methods never throw; after the run ends they do nothing. */
export declare class PythonRun {
  /** Settles binding call `id`: `payload` is the resolution's JSON text, or the message as a JSON string. */
  reply(id: number, ok: boolean, payload: string): void
  /** SIGKILLs the run's process group now (for a host that is exiting); the run still settles. */
  kill(): void
  /** Ends the run with the message: as `abort`, or as `kind`. */
  abort(message: string, kind?: FailureKind | undefined | null): void
}

/**
 * A child booted ahead of the next run (behind the same sandbox and limits), never used by any
 * program before it. Dropping or disposing it kills it.
 */
export declare class PythonSpare {
  /**
   * How many milliseconds the spare took to boot, once it has (none while it boots, or if it
   * failed): how soon before a run one must be started to be ready for it.
   */
  get bootMs(): number | null
  /** Kills the spare and removes its directory; returns once it is gone. */
  dispose(): void
  /**
   * Whether nothing of the spare is left to wait for (its child gone or taken by a run, no
   * boot or dispose under way): a released spare that `dispose` need not wait for any more.
   */
  get gone(): boolean
  /**
   * Kills the spare and removes its directory and cgroups on a thread of its own (the kernel
   * may take milliseconds to remove a cgroup); returns at once. A `dispose` meanwhile returns
   * once that is done.
   */
  release(): void
}

/**
 * A runtime's Python template (docs/python.md#the-template): one interpreter that has imported
 * what runs need and forks each run's child; killed at dispose.
 */
export declare class PythonTemplate {
  /** The template process's pid while one runs (none after dispose). */
  get pid(): number | null
  /** Kills the template; runs still in flight end as they would have. */
  dispose(): void
}

/** A namespace declaration as the JavaScript layer read it (each field once, strings only). */
export interface BindingDecl {
  global: string
  errorClassName?: string
  memberNameProperty?: string
}

/** Whether this build and machine can contain isolates in processes (Linux, helper shipped). */
export declare function containedIsolatesAvailable(): boolean

/** `maxPendingCalls` when the config names none (src/channel/backlog.rs). */
export declare const DEFAULT_MAX_PENDING_CALLS: number

/** The `abort` message of a run whose runtime was disposed while it was in flight. */
export declare const DISPOSED: string

/** What makes an attempt of a durable run see what every other attempt saw. */
export interface DurableOptions {
  /** The journal's seed: 16 lowercase hexadecimal digits. */
  seed: string
  /** The journal's clock: milliseconds since the epoch when the run first started. */
  clockMs: number
  /** How many calls the journal answers. */
  replayedCalls: number
}

/** How a run failed, as `error.kind` spells it. */
export declare const enum FailureKind {
  Exception = 'exception',
  Timeout = 'timeout',
  Abort = 'abort',
  WorkerExit = 'worker-exit',
  InvalidOutput = 'invalid-output',
  OutputLimit = 'output-limit',
  /**
   * A child (a sandbox process, a Python child) broke the channel protocol, or a program left
   * more waiting in the host than a run may (src/channel/backlog.rs). The native marker of a
   * cause the `ctx.codeRuntime` seam reports as `worker-exit` (lib/session.mjs) and the
   * `ctx.ptcRuntime` seam as `protocol`. A sandbox process reports it for its isolate's
   * pending-calls cap; a Python child never may (`child_reportable`).
   */
  Protocol = 'protocol',
  /**
   * The sandbox helper refused a run's file policy (a path that is no longer what `resolve()`
   * checked): the `ctx.ptcRuntime` seam's `sandbox-unavailable`, nothing ran. Only runs with a
   * policy (that seam's) can end so; never parsed from a child's frame.
   */
  SandboxUnavailable = 'sandbox-unavailable',
}

/**
 * Runs one program on a sandbox process playing `scenario` (declared binding: `tools.echo`) and
 * returns `{ result: { logs, value?, error? }, calls, streamed, processesLeft }` as JSON text.
 * For the suite.
 */
export declare function forgeContainedIsolateRun(scenario: string, maxOutputBytes: number): string

/**
 * Runs `programs` one after another on a pool of processes playing `scenario`, each serving
 * `maxRunsPerProcess` runs at most; returns `{ results: [{ result, calls, streamed }], processesLeft }`
 * as JSON text. For the suite (a compromised process must never see a later run).
 */
export declare function forgeContainedIsolateRuns(scenario: string, maxOutputBytes: number, programs: Array<string>, maxRunsPerProcess: number): string

/**
 * A pool like `new IsolatePool(options)` whose processes play `scenario` (`isolate-forge`), for
 * the suite: its runs go the whole real way (`startContainedIsolateRun`, the channel read on
 * Node's main thread, the JavaScript runtime), only the process on the other end is subverted.
 */
export declare function forgeIsolatePool(scenario: string, options: IsolatePoolOptions): IsolatePool

/** A result decided before any isolate exists (a pre-aborted signal), through a fresh ledger. */
export declare function isolateFreshFailure(kind: FailureKind, message: string, maxOutputBytes: number): IsolateReport

export interface IsolateNamespace {
  global: string
  /** The declared function names, in the order the program-side indices refer to. */
  names: Array<string>
  errorClassName?: string
  memberNameProperty?: string
}

export interface IsolatePoolOptions {
  maxOldGenerationSizeMb: number
  maxOutputBytes: number
  maxProcesses: number
  maxRunsPerProcess: number
  runAs?: RunAs
}

/** The final report of an isolate run: `value` is the completion's compact JSON text. */
export interface IsolateReport {
  /** The entries as an array, or (many of them) an `IsolateLogs` to take them from a slice at a time. */
  logs: string[] | IsolateLogs
  value?: string
  error?: ReportError
  stats: ReportStats
}

export interface IsolateRunOptions {
  /** Every code unit kept (a raw lone surrogate in a string literal survives the strip). */
  program: string
  namespaces: Array<IsolateNamespace>
  computeMs: number
  maxWallMs: number
  maxOutputBytes: number
  /** Binding calls in flight at most (`maxPendingCalls`; absent, 128); one more ends the run. */
  maxPendingCalls?: number
  maxOldGenerationSizeMb: number
  /** Whether admitted log entries are streamed to the host as they are emitted. */
  streamLogs: boolean
  /**
   * The Node major whose console output the isolate reproduces (the host's); absent or one the
   * console does not know (not 20, 22, 24 or 26): the newest LTS it supports.
   */
  nodeMajor?: number
  /** A durable attempt's seed and clock (docs/durable.md#determinism); absent for `run()`. */
  durable?: DurableOptions
}

/** The hardening layers of the sandbox processes, as the first one reported them. */
export interface IsolateSandboxLayers {
  process: boolean
  helper: boolean
  namespaces: boolean
  landlock: number
  seccomp: boolean
  /** The seccomp allowlist holds on every thread of the process (on top of the deny-list). */
  seccompAllowlist: boolean
  processCap: boolean
  /** A memory cgroup caps the process (its resident memory is read by the supervisor anyway). */
  memoryCgroup: boolean
  /** The process runs in a root of its own (bind mounts of the loader's files and the addon). */
  privateRoot: boolean
  /** The uid the process has as the host's kernel sees it. */
  uid?: number
}

/** Opens `path` (absolute) with no symbolic link followed and says what is there. */
export declare function policyPath(path: string): PolicyPath

/** What is at a policy path, opened without following links. */
export interface PolicyPath {
  /**
   * The errno's name when it cannot be opened so (`ELOOP`: a symbolic link is on the way or at
   * its end; `ENOENT`, `ENOTDIR`, `EACCES`…); absent when it was opened.
   */
  error?: string
  /** It is a directory. */
  directory: boolean
  /** It is the host's root directory itself (`/`, or any other path to that object). */
  hostRoot: boolean
}

/** The prefix of every error message the runtime itself writes. */
export declare const PREFIX: string

/** Starts preparing a spare for runs capped at `heapMb` (returns at once). */
export declare function prepareIsolateSpare(heapMb: number): IsolateSpare

/**
 * Starts one sandbox process in probe mode: hardened as a serving one, it makes the system calls
 * an escaped program would against this host and reports each errno (JSON text). For the suite.
 * `allowlist: false` leaves the seccomp allowlist out (the layers beneath it, on their own).
 */
export declare function probeContainedIsolate(allowlist: boolean): string

/** What of the host's tree a run is granted (lib/ptc/file-plan.mjs plans it from the policy). */
export interface PythonFilePolicy {
  cwd: string
  readOnly: Array<string>
  readWrite: Array<string>
  network: boolean
  /**
   * The child may take file locks (`flock`, `fcntl` record and open file description locks,
   * leases); `false` refuses them with EPERM (a `read-only` policy).
   */
  locks: boolean
}

/**
 * Whether this build enforces a run's `filePolicy` (the child's root and Landlock rules from the
 * sandbox helper; `runtime.sandbox` says whether they hold on this machine).
 */
export declare function pythonFilePolicyAvailable(): boolean

export interface PythonInterpreter {
  /** `pythonBin` resolved to an absolute path. */
  resolved: string
  /** The path runs spawn: the probe's `sys.executable` when usable, else `resolved`. */
  executable: string
  /** `cpython 3 11 7` */
  version: string
  /** The installation's directories (`sys.prefix` and friends), which a sandboxed child may read. */
  prefixes: Array<string>
}

export interface PythonLoad {
  interpreter?: PythonInterpreter
  /** The load-time error, without the package prefix. */
  error?: string
}

/** Resolves `pythonBin` (against `cwd` or the absolute entries of `path`) and probes it. */
export declare function pythonLoadInterpreter(bin: string, path: string | undefined | null, cwd: string, tmpdir: string): PythonLoad

/** `[code-runtime-native] log capture truncated at <N> bytes`, as the host writes it. */
export declare function pythonLogTruncationMarker(maxBytes: number): string

/**
 * Compiles the child's modules (the addon's embedded copies) with the interpreter runs will use;
 * `null` when it cannot (runs still work).
 */
export declare function pythonPrecompile(executable: string, tmpdir: string): PythonPycache | null

/**
 * Starts booting a spare child on a thread of its own (under `filePolicy`, for runs with exactly
 * that policy; none boots when one of its paths cannot be opened with no link followed).
 */
export declare function pythonPrepareSpare(options: PythonSpareOptions, pycache?: PythonPycache | undefined | null, template?: PythonTemplate | undefined | null): PythonSpare

/**
 * The host's protocol constants and the fd-3 roster, from src/channel/table, for the mirror
 * test against `py/protocol.py`.
 */
export declare function pythonProtocolInfo(): PythonProtocolInfo

export interface PythonProtocolInfo {
  protocolFd: number
  /**
   * `py/protocol.py`'s TypedDicts as src/channel/table lists them, the one roster the suite
   * holds the child to.
   */
  roster: Array<PythonRosterRow>
}

/**
 * A Python run's report (the `Done` event's payload): `value` is the completion's JSON text the
 * host validated.
 */
export interface PythonReport {
  logs: string[]
  value?: string
  error?: ReportError
  stats: PythonStats
}

/**
 * What a run's own root holds of the host's (docs/seam.md#denied-the-programs-claim): a file
 * beneath none of it, nor beneath the interpreter's or the policy's trees, is absent from the run.
 */
export declare function pythonRootHolds(tmpdir: string): PythonRootHolds

/** What a run's own root holds of the host's beside the interpreter and a policy's trees. */
export interface PythonRootHolds {
  /** The system's trees, read-only. */
  system: Array<string>
  /** The prefix every staging directory (the bootstrap and the run's scratch) of this host has. */
  stagingPrefix: string
}

/** One TypedDict of the fd-3 roster (docs/protocol.md#frame-roster). */
export interface PythonRosterRow {
  name: string
  /** The frame's `type` word; absent for an object inside a frame. */
  frameType?: string
  /** Required keys (a frame's `type` among them), in the table's order. */
  required: Array<string>
  optional: Array<string>
}

export interface PythonRunOptions {
  executable: string
  /** What the child may read of the interpreter's installation. */
  interpreterPaths: Array<string>
  tmpdir: string
  cpuSeconds: number
  addressSpaceBytes: number
  maxLogBytes: number
  maxValueBytes: number
  maxWallMs: number
  runAs?: RunAs
  graceMs: number
  frameCap: number
  /** Binding calls in flight at most (`maxPendingCalls`; absent, 128); one more ends the run. */
  maxPendingCalls?: number
  /** The boot frame's `namespaces`, as JSON. */
  namespacesJson: string
  /** Per namespace: its global then its member names (every code unit kept). */
  dispatch: Array<Array<string>>
  program: string
  streamLogs: boolean
  /**
   * The run's file policy (the `ctx.ptcRuntime` seam's): absent, the child reaches none of the
   * host's files and no network.
   */
  filePolicy?: PythonFilePolicy
  /** A durable attempt's seed and clock (docs/durable.md#determinism); absent for `run()`. */
  durable?: DurableOptions
}

/** Which layers hold around a child, as one real spawn through the sandbox showed them. */
export interface PythonSandbox {
  /** The sandbox helper was found beside the addon. */
  helper: boolean
  namespaces: boolean
  /** The Landlock ABI enforced (0: none). */
  landlock: number
  seccomp: boolean
  /** A per-run process cap holds (RLIMIT_NPROC in the run's user namespace, or a cgroup). */
  processCap: boolean
  /** The child runs in a root of its own (bind mounts of exactly what it needs). */
  privateRoot: boolean
  /** The uid the child has as the host's kernel sees it (absent without the helper). */
  uid?: number
  /** A memory cgroup caps each run as a whole (what it allocates and the kernel memory it pins). */
  memoryCgroup: boolean
}

/**
 * Removes what dead hosts left in `tmpdir`, then spawns one child the way runs do, reads the
 * helper's report, and kills it.
 */
export declare function pythonSandboxLayers(executable: string, interpreterPaths: Array<string>, tmpdir: string, runAs?: RunAs | undefined | null): PythonSandbox

/** How a spare child is started: the run options it must match. */
export interface PythonSpareOptions {
  executable: string
  interpreterPaths: Array<string>
  tmpdir: string
  cpuSeconds: number
  addressSpaceBytes: number
  runAs?: RunAs
  /** The file policy of the runs it may serve (absent: runs without one). */
  filePolicy?: PythonFilePolicy
}

/**
 * Starts a run; `on_event` receives its events (`Spawned`, `Call`, `Logs`, `Barrier`, then one
 * `Done`) as the isolate's do (src/boundary/events.rs).
 */
export declare function pythonStartRun(options: PythonRunOptions, pycache: PythonPycache | null | undefined, spare: PythonSpare | null | undefined, template: PythonTemplate | null | undefined, onEvent: (kind: RunEventKind, id: number, ns: number, name: number, payload: string | string[] | PythonReport | undefined) => void): PythonRun

/**
 * Starts the runtime's template for runs of `executable` (Linux, behind the sandbox helper);
 * throws why it cannot (runs then start their own interpreter). `ownRoot`: the load's probe
 * showed runs get a root of their own (namespaces and `privateRoot`), so a forked run's
 * directory need not be made on the host's disk.
 */
export declare function pythonStartTemplate(executable: string, tmpdir: string, runAs?: RunAs | undefined | null, ownRoot?: boolean | undefined | null): PythonTemplate

/** `cpuMs` is absent when the kernel's accounting could not be read; `maxRssBytes` too. */
export interface PythonStats {
  cpuMs?: number
  wallMs: number
  maxRssBytes?: number
  /** Where a budget, an abort or a protocol breach stopped the program while it ran. */
  stoppedAt?: ReportStoppedAt
}

/**
 * A run's failure as either backend's report carries it, its message exactly as the ledger
 * holds it.
 */
export interface ReportError {
  kind: FailureKind
  message: string
}

export interface ReportStats {
  cpuMs: number
  wallMs: number
  heapUsedBytes: number
  heapPeakBytes: number
  /** Where a budget, an abort or a protocol breach stopped the program while it ran. */
  stoppedAt?: ReportStoppedAt
}

/** `stats.stoppedAt`: the program's innermost frame when it was stopped, in its own coordinates. */
export interface ReportStoppedAt {
  line: number
  column: number
  functionName?: string
}

export declare function reservedSets(): ReservedSets

/** The four reserved-set constants, handed to the JavaScript layer that exports them. */
export interface ReservedSets {
  portableReservedWords: Array<string>
  reservedBindingGlobals: Array<string>
  reservedErrorMembers: Array<string>
  /** Source of the `DUNDER_MEMBER` regular expression. */
  dunderMember: string
}

/**
 * `runAs`: the uid and gid a run has outside its namespaces when the host runs as root
 * (default `nobody`, 65534). Other hosts' runs have the host's own ids.
 */
export interface RunAs {
  uid: number
  gid: number
}

/** What an event is, as the callback's first argument. */
export declare const enum RunEventKind {
  /** Nothing for the callback (the isolate's `OnMain` work already ran on the main thread). */
  None = 0,
  /** A binding call: `(kind, id, ns, name, argumentsJson)`. */
  Call = 1,
  /** Log entries the ledger admitted: `(kind, 0, 0, 0, texts)`. */
  Logs = 2,
  /** The run's last event: `(kind, 0, 0, 0, report)`. */
  Done = 3,
  /** Python: the run's child is up (the host may boot the next run's spare now). */
  Spawned = 4,
  /** Python: the call-backlog barrier; reply to id -1 once earlier calls ran their microtasks. */
  Barrier = 5,
}

/**
 * The helper children are actually started through (`sandbox::helper::path()`: an executable
 * file beside the addon); `null` when there is none, and children start without it.
 */
export declare function sandboxHelperInUse(): string | null

/** The helper's path beside the addon file this process loaded; `null` where no helper ships. */
export declare function sandboxHelperPath(): string | null

/** Starts a contained run; events arrive exactly as `startIsolateRun`'s. */
export declare function startContainedIsolateRun(pool: IsolatePool, options: IsolateRunOptions, onEvent: (kind: RunEventKind, id: number, ns: number, name: number, payload: string | string[] | IsolateReport | undefined) => void): ContainedIsolateRun

/**
 * Starts a run on a new thread, or on `spare`'s when it fits the run (same heap cap, a program
 * its stack can strip). Events arrive through `onEvent(kind, id, ns, name, payload)`.
 */
export declare function startIsolateRun(options: IsolateRunOptions, onEvent: (kind: RunEventKind, id: number, ns: number, name: number, payload: string | string[] | IsolateReport | undefined) => void, spare?: IsolateSpare | undefined | null): IsolateRun

/**
 * Validates binding declarations; returns the exact rejection message, or `null` when usable.
 * `dialect` is `"isolate"` or `"python"`.
 */
export declare function validateBindings(decls: Array<BindingDecl>, dialect: string): string | null
