// Tools that need approval (`needsApproval`), called from a program through the AI SDK's own
// approval flow (docs/durable.md#the-ai-sdk). The code tool's `needsApproval` runs the program
// durably up to its first call that needs approval: a program that never makes one has its result
// kept for `execute`, which returns it without running anything again; one that does pauses there,
// its journal is stored under the tool call's id, and the SDK asks the user to approve the code
// tool call. Once approved, `execute` resumes the journal with that one call approved: the calls
// made before it are answered from the journal, never made twice. A program that then reaches a
// second such call pauses again: its output says so, and the model's next call of the code tool
// with the same program continues from that journal, through another approval.
import { PREFIX } from '../request.mjs'
import { RecentJournals, pausedRun, storedRun } from './approval.mjs'

/** Programs whose run ended in `needsApproval`, waiting for `execute` in the same step. */
const KEPT_RESULTS = 64

/** Whether a tool gates its calls behind the user's approval. */
export function needsApprovalOf(candidate) {
  return candidate.needsApproval !== undefined && candidate.needsApproval !== false
}

/**
 * Whether the user must approve this call of `nested`: its `needsApproval`, as the SDK asks it
 * (`input`, `{ toolCallId, messages, context }`).
 */
export async function callNeedsApproval(nested, input, options) {
  const rule = nested.needsApproval
  if (typeof rule !== 'function') return rule === true
  return (await rule(input, { toolCallId: options.toolCallId, messages: options.messages ?? [], context: options.context })) === true
}

/**
 * What the approval flow keeps between the SDK's steps. `attempt(code, options, journal, approved)`
 * runs one durable attempt; while it runs, a call of a tool that needs approval pauses it
 * (lib/adapters/approval.mjs `approveOrPause`) unless it is the call `approved` names.
 */
export class ApprovalFlow {
  /**
   * @param {{ attempt: Function, store?: { get: Function, set: Function, delete: Function } }} options
   */
  constructor({ attempt, store }) {
    this.attempt = attempt
    this.store = store ?? new RecentJournals()
    this.finished = new Map()
  }

  /**
   * The SDK's `needsApproval` of the code tool: runs the program until it ends or pauses. Asked
   * again for a call the conversation already asked the user about (the SDK asks once more before
   * it executes an approved call), it runs nothing.
   */
  async needsApproval({ code }, options) {
    if (this.finished.has(options.toolCallId)) return false
    // Asked before: `execute` resumes the paused run, or says it is gone; nothing runs here.
    if (approvalRequested(options.messages, options.toolCallId)) return true
    const earlier = await this.continuation(code, options.messages)
    const result = await this.attempt(code, options, earlier?.entry.journal, undefined)
    if (earlier !== undefined) await this.store.delete(earlier.key)
    if ('suspended' in result) {
      await this.store.set(options.toolCallId, pausedRun('approval', code, result))
      return true
    }
    this.finished.set(options.toolCallId, result)
    if (this.finished.size > KEPT_RESULTS) this.finished.delete(this.finished.keys().next().value)
    return false
  }

  /**
   * The SDK's `execute` of the code tool: the result `needsApproval` kept, or the approved
   * program resumed, or (the SDK asked no approval: a `toolApproval` setting decided) a first run.
   * Resolves with the run's result, `suspended` when it paused again.
   */
  async execute({ code }, options) {
    const kept = this.finished.get(options.toolCallId)
    if (kept !== undefined) {
      this.finished.delete(options.toolCallId)
      return kept
    }
    const entry = await storedRun(this.store, options.toolCallId)
    let result
    if (entry?.kind === 'approval' && entry.code === code) {
      result = await this.attempt(code, options, entry.journal, { ...entry.paused, used: false })
      await this.store.delete(options.toolCallId)
    } else if (approvalRequested(options.messages, options.toolCallId)) {
      throw new Error(
        `${PREFIX}the program of tool call ${JSON.stringify(options.toolCallId)} was approved, but its paused run is not in ` +
          'the journal store (dropped; stored by another process without a shared store; or the approval came from a ' +
          "generateText toolApproval setting, which this tool's flow does not go through): nothing ran, so no tool was " +
          'called twice. Pass codeRuntimeTool({ journals }) a store every process shares, leave the code tool out of ' +
          'toolApproval, and run the program again.',
      )
    } else {
      // No approval was asked (a toolApproval setting decided): a rerun still goes on from a pause.
      const earlier = await this.continuation(code, options.messages)
      result = await this.attempt(code, options, earlier?.entry.journal, undefined)
      if (earlier !== undefined) await this.store.delete(earlier.key)
    }
    if ('suspended' in result) await this.store.set(options.toolCallId, pausedRun('continue', code, result))
    return result
  }

  /** The call a paused program waits on: `{ tool, input }`, or `undefined`. */
  async suspension(toolCallId) {
    const entry = await storedRun(this.store, toolCallId)
    return entry === undefined ? undefined : { tool: entry.paused.tool, input: entry.paused.input }
  }

  /**
   * The paused run this call of `code` goes on from: the latest code tool result of the
   * conversation that paused at a second approval with the same program.
   */
  async continuation(code, messages) {
    const ids = []
    for (const message of messages ?? []) {
      if (message?.role !== 'tool' || !Array.isArray(message.content)) continue
      for (const part of message.content) {
        if (part?.type === 'tool-result' && part.output?.type === 'json' && part.output.value?.suspended !== undefined) ids.push(part.toolCallId)
      }
    }
    for (const key of ids.reverse()) {
      const entry = await storedRun(this.store, key)
      if (entry?.kind === 'continue' && entry.code === code) return { key, entry }
    }
    return undefined
  }
}

/** Whether the conversation holds an approval request for `toolCallId`. */
function approvalRequested(messages, toolCallId) {
  return (messages ?? []).some(
    (message) =>
      message?.role === 'assistant' &&
      Array.isArray(message.content) &&
      message.content.some((part) => part?.type === 'tool-approval-request' && part.toolCallId === toolCallId),
  )
}
