// `code-runtime-native/mastra`: a Mastra Code Mode transport (`CodeModeTransport` of
// `@mastra/core/tools`, tested with @mastra/core 1.71.0). Structural types: they hold without
// Mastra's own declarations.
import type { AdapterRuntimeOptions } from './options.js'

/** What Mastra's Code Mode tool passes to a transport for one program. */
export interface MastraCodeModeRunOptions {
  sandbox?: unknown
  /** The model's TypeScript, run as the body of an async function. */
  program: string
  /** Exposed as `external_<sanitizeToolId(id)>(input)`. */
  toolIds: string[]
  dispatch: (tool: string, args: unknown) => Promise<unknown>
  /** The run's elapsed deadline in ms. */
  timeout: number
  abortSignal?: AbortSignal
  onExternalCall?: (tool: string, args: unknown) => void
  onExternalResult?: (tool: string, durationMs: number, error?: unknown) => void
}

/** Mastra's `CodeModeToolResult`. */
export interface MastraCodeModeResult {
  success: boolean
  result?: unknown
  logs?: string[]
  /**
   * What the program threw (its name, the program's line), or the runtime's failure under its
   * kind's name: `TimeoutError`, `AbortError`, `WorkerExitError`, `InvalidOutputError`,
   * `OutputLimitError`, `ProtocolError`.
   */
  error?: { message: string; name?: string; line?: number }
}

export declare class CodeRuntimeTransport {
  constructor(options?: AdapterRuntimeOptions)
  /** `false`: the isolate is the boundary, so Mastra runs this transport without a workspace sandbox. */
  readonly requiresSandbox: false
  run(options: MastraCodeModeRunOptions): Promise<MastraCodeModeResult>
  /** Ends the runtime this transport started (programs still running end as `AbortError`). */
  dispose(): Promise<void>
}
