// `code-runtime-native/tanstack`: an `IsolateDriver` for TanStack AI Code Mode
// (`@tanstack/ai-code-mode`, tested with 0.3.4). Structural types: they hold without TanStack's
// own declarations.
import type { AdapterRuntimeOptions } from './options.js'

/** A tool as TanStack injects it: `execute` gets the program's argument (`{}` when none). */
export interface TanStackToolBinding {
  name: string
  description?: string
  inputSchema?: Record<string, unknown>
  outputSchema?: Record<string, unknown> | undefined
  execute: (args: unknown, context?: any) => Promise<unknown>
}

export interface TanStackIsolateConfig {
  /** Keyed by the global each becomes (`external_<tool name>`); every key must be an identifier. */
  bindings: Record<string, TanStackToolBinding>
  /** The run's elapsed deadline in ms. */
  timeout?: number
  /** The heap cap in MiB (`maxOldGenerationSizeMb` of the runtime that runs the context). */
  memoryLimit?: number
}

/** TanStack's `NormalizedError`; `code` is the runtime's failure kind. */
export interface TanStackNormalizedError {
  name: string
  message: string
  stack?: string
  code?: string
}

export interface TanStackExecutionResult<T = unknown> {
  success: boolean
  value?: T
  error?: TanStackNormalizedError
  /** `console.info/warn/error` entries start with `INFO: ` / `WARN: ` / `ERROR: `. */
  logs?: string[]
}

export interface TanStackIsolateContext {
  execute<T = unknown>(code: string): Promise<TanStackExecutionResult<T>>
  /** Ends a program still running (its result is an `AbortError`); later executes are refused. */
  dispose(): Promise<void>
}

export interface CodeRuntimeDriver {
  createContext(config: TanStackIsolateConfig): Promise<TanStackIsolateContext>
  /** Ends the runtimes this driver started. */
  dispose(): Promise<void>
}

export type CodeRuntimeDriverOptions = AdapterRuntimeOptions & {
  /** Elapsed deadline of a context that names none, ms. Default 30000. */
  timeout?: number
  /** Heap cap of a context that names none, MiB. Default 128 (ignored with a borrowed runtime). */
  memoryLimit?: number
}

export declare function createCodeRuntimeDriver(options?: CodeRuntimeDriverOptions): CodeRuntimeDriver
