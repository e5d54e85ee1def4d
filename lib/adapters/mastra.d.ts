// `code-runtime-native/mastra`: a Mastra Code Mode transport (`CodeModeTransport` of
// `@mastra/core/tools`, tested with @mastra/core 1.71.0), and Mastra's Code Mode on it with tools
// that need approval. Structural types: they hold without Mastra's own declarations.
import type { AdapterRuntimeOptions, PausedCodeRunStore } from './options.js'

export type { PausedCodeRun, PausedCodeRunStore } from './options.js'

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

/** Mastra's `createCodeMode` config: the tools programs call as `external_<id>`, the tool's id, the deadline. */
export interface MastraCodeModeConfig {
  /** Mastra tools (`createTool`); one with `requireApproval` pauses the program at its calls. */
  tools: Record<string, object>
  /** The code tool's id; default `execute_typescript`. */
  id?: string
  /** Each program's elapsed deadline, ms; default 30000, as Mastra's. */
  timeout?: number
}

export type MastraCodeModeOptions = AdapterRuntimeOptions & {
  /** Where paused programs wait: share one (and Mastra's storage) between processes to approve anywhere. */
  journals?: PausedCodeRunStore
}

/** The code tool: a Mastra tool (`createTool`) to give an `Agent`. */
export interface MastraCodeModeTool {
  readonly id: string
  readonly description: string
  inputSchema?: unknown
  outputSchema?: unknown
  execute?: (input: { code: string }, context?: any) => Promise<any>
}

/**
 * Mastra's Code Mode on this runtime: Mastra's own tool and instructions, or, when a tool needs
 * approval (`requireApproval`), a tool whose programs pause at such calls and ask the user through
 * Mastra's approval flow (`approveToolCall`, `declineToolCall`), resuming without calling any tool
 * twice (docs/durable.md#mastra).
 */
export declare function createCodeMode(
  config: MastraCodeModeConfig,
  options?: MastraCodeModeOptions,
): { tool: MastraCodeModeTool; instructions: string; dispose(): Promise<void> }
