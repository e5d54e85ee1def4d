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

