// What every framework adapter of code-runtime-native takes: the runtime it runs programs on, and
// where programs paused for an approval wait.
import type { CodeJournal } from '../index.js'
import type { IsolatePtcRuntimeConfig, PtcRuntime } from '../ptc/index.js'

/**
 * Either a `ctx.ptcRuntime` you already run (the adapter never disposes it), or the config of an
 * `IsolatePtcRuntime` the adapter starts itself and ends with its `dispose()`. Neither: an
 * IsolatePtcRuntime with the production defaults.
 */
export type AdapterRuntimeOptions =
  | { runtime: PtcRuntime; config?: never }
  | { runtime?: undefined; config?: IsolatePtcRuntimeConfig }


/** What an approval flow keeps of one paused program: plain JSON (docs/durable.md#ctxptcruntime-and-the-adapters). */
export interface PausedCodeRun {
  /** `approval`: waiting for the user's answer; `continue` (the AI SDK): for the model to run the same code again. */
  kind: 'approval' | 'continue'
  code: string
  journal: CodeJournal
  /** The call it paused at. */
  paused: { tool: string; input: unknown }
}

/**
 * Where paused programs wait, by key (the AI SDK's tool call id; Mastra's `<runId>/<toolCallId>`):
 * a `Map` fits, as does a database table of JSON. Share one between processes to approve in any
 * of them. Default: this process's most recent 1024, within 256 MiB of JSON.
 */
export interface PausedCodeRunStore {
  get(key: string): PausedCodeRun | undefined | Promise<PausedCodeRun | undefined>
  set(key: string, run: PausedCodeRun): unknown
  delete(key: string): unknown
}
