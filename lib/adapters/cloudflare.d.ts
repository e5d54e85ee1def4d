// `code-runtime-native/cloudflare`: an `Executor` for Cloudflare's Code Mode
// (`@cloudflare/codemode`, tested with 0.5.6). Structural types: on Node the package's main entry
// does not load (it imports `cloudflare:workers`).
import type { AdapterRuntimeOptions } from './options.js'

/** A namespace of tools: `name.tool(...args)` in the program calls `fns[tool](...args)`. */
export interface CloudflareResolvedProvider {
  name: string
  fns: Record<string, (...args: unknown[]) => Promise<unknown>>
  /** JavaScript run in the program's scope before the code, after the namespaces exist. */
  prelude?: string
}

export interface CloudflareExecuteResult {
  result: unknown
  /**
   * What the program threw (as V8 prints it: name, message, the code's frames), or
   * `<Kind>Error: <message>` for the runtime's failures (`TimeoutError`, `AbortError`, ...).
   */
  error?: string
  /** `console.warn` / `console.error` entries start with `[warn] ` / `[error] `. */
  logs?: string[]
}

export interface CloudflareExecuteOptions {
  /** Workers RPC bindings: refused on Node (pass their tools as a provider). */
  connectors?: { name: string; binding: { callTool(method: string, args: unknown): Promise<unknown> } }[]
}

export type CodeRuntimeExecutorOptions = AdapterRuntimeOptions & {
  /** Each run's elapsed deadline, ms. Default 60000. */
  timeout?: number
  /** Aborting it ends every run in flight and every later one. */
  signal?: AbortSignal
}

export declare class CodeRuntimeExecutor {
  constructor(options?: CodeRuntimeExecutorOptions)
  /** Never throws: every failure is `{ result: undefined, error, logs }`. */
  execute(
    code: string,
    providersOrFns: CloudflareResolvedProvider[] | Record<string, (...args: unknown[]) => Promise<unknown>>,
    options?: CloudflareExecuteOptions,
  ): Promise<CloudflareExecuteResult>
  /** Ends the runtime this executor started (programs still running end as `AbortError`). */
  dispose(): Promise<void>
}

/** Cloudflare's tool-name rule, as its executors and type generator apply it. */
export declare function sanitizeToolName(name: string): string
