// `code-runtime-native/ai-sdk`: an AI SDK tool (`ai` 7, tested with 7.0.173) that runs a
// model-written program against a ToolSet.
import type { Tool, ToolSet } from 'ai'
import type { PtcRunFailureKind } from '../ptc/index.js'
import type { AdapterRuntimeOptions } from './options.js'

/** What a successful program gives the model: what it printed and, if any, what it returned. */
export interface CodeRunOutput {
  logs: string[]
  value?: unknown
}

export type CodeRuntimeToolOptions = AdapterRuntimeOptions & {
  /** The tools a program calls as `await tools.<name>(input)` (not those needing approval). */
  tools: ToolSet
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
}

export declare function codeRuntimeTool(options: CodeRuntimeToolOptions): CodeRuntimeTool
