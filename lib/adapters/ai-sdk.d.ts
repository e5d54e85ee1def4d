// `code-runtime-native/ai-sdk`: an AI SDK tool (`ai` 7, tested with 7.0.173) that runs a
// model-written program against a ToolSet.
import type { Tool, ToolSet } from 'ai'
import type { PtcRunFailureKind } from '../ptc/index.js'
import type { AdapterRuntimeOptions, PausedCodeRunStore } from './options.js'

export type { PausedCodeRun, PausedCodeRunStore } from './options.js'

/**
 * What a program gives the model: what it printed and, if any, what it returned; or, where it
 * paused at a second call that needs approval, that call and what the model should do.
 */
export interface CodeRunOutput {
  logs: string[]
  value?: unknown
  /** The call the program paused at: the model runs the same code again to go on. */
  suspended?: { tool: string; input: unknown }
  /** What the model is told to do about `suspended`. */
  message?: string
}

export type CodeRuntimeToolOptions = AdapterRuntimeOptions & {
  /**
   * The tools a program calls as `await tools.<name>(input)`. A tool with `needsApproval` pauses
   * the program at its call and the SDK asks the user to approve the code tool call
   * (docs/durable.md#the-ai-sdk); client-side tools (no `execute`) are left out.
   */
  tools: ToolSet
  /**
   * Whether tools with `needsApproval` are offered (default `true`). They need a runtime with
   * `runDurable()`: a borrowed one without it leaves them out.
   */
  approvals?: boolean
  /** Where paused programs wait for approval: share one between processes to resume anywhere. */
  journals?: PausedCodeRunStore
  /** The tool's description for the model; default: the language, the `tools` global, each tool's input. */
  description?: string
  /** Each run's elapsed deadline, ms (the runtime's `timeoutMs` when absent). */
  timeoutMs?: number
}

/** The error a failed program throws, which the SDK reports as the call's `tool-error`. */
export declare class CodeRunError extends Error {
  readonly name: 'CodeRunError'
  /** The runtime's failure kind. */
  readonly kind: PtcRunFailureKind
  /** What the program printed before it failed. */
  readonly logs: string[]
}

export type CodeRuntimeTool = Tool<{ code: string }, CodeRunOutput> & {
  /** Ends the runtime this tool started (programs still running end as `abort`). */
  dispose(): Promise<void>
  /** The call a paused program of tool call `toolCallId` waits on, to show the user; `undefined` when none. */
  suspension(toolCallId: string): Promise<{ tool: string; input: unknown } | undefined>
}

export declare function codeRuntimeTool(options: CodeRuntimeToolOptions): CodeRuntimeTool
