// `createCodeMode(config, options)`: Mastra's Code Mode (its `execute_typescript` tool and its
// instructions, built by Mastra's own `createCodeMode` on this runtime's transport) whose tools may
// need approval (`requireApproval`), through Mastra's own approval flow (docs/durable.md#mastra).
// Each program runs durably; a call of a tool that needs approval pauses it, its journal is kept
// under the agent run's id and the tool call's, and the tool suspends with Mastra's
// `requireToolApproval`, so the agent asks the user to approve that tool with its arguments
// (`tool-call-approval`). Approved (`approveToolCall`), Mastra runs the code tool again, which
// resumes the journal with that call let through: the calls before it are answered from the
// journal, never made twice, and a later call that needs approval pauses it again the same way.
// Declined, Mastra tells the model and runs nothing more. `dispose()` ends the runtime the
// transport started.
import { createCodeMode as mastraCodeMode, createTool, isValidationError } from '@mastra/core/tools'
import { PREFIX } from '../request.mjs'
import { RecentJournals, approveOrPause, pausedRun, storedRun } from './approval.mjs'
import { CodeRuntimeTransport } from './mastra-transport.mjs'

/** Mastra Code Mode's default elapsed deadline of a program, ms. */
const DEFAULT_TIMEOUT_MS = 30_000

/**
 * @param {{ tools: Record<string, object>, id?: string, timeout?: number }} config Mastra's
 *   `createCodeMode` config
 * @param {{ runtime?: object, config?: object, journals?: object }} [options] the runtime, as
 *   `CodeRuntimeTransport` takes it, and where paused programs wait (default: this process's)
 */
export function createCodeMode(config, options = {}) {
  const transport = new CodeRuntimeTransport(options)
  const mode = mastraCodeMode(config, transport)
  const tools = toolsById(config)
  const dispose = () => transport.dispose()
  if (![...tools.values()].some(needsApprovalRule)) return { tool: mode.tool, instructions: mode.instructions, dispose }
  const journals = options.journals ?? new RecentJournals()
  const timeout = config.timeout ?? DEFAULT_TIMEOUT_MS
  const durable = transport.runtime.durable
  const base = mode.tool
  const tool = createTool({
    id: base.id,
    description: base.description,
    inputSchema: base.inputSchema,
    outputSchema: base.outputSchema,
    execute: ({ code }, context) => {
      const run = () => runWithApprovals({ code, context, tools, transport, journals, timeout, durable })
      return typeof context?.observe?.span === 'function' ? context.observe.span(`code-mode:${base.id}`, run) : run()
    },
  })
  return { tool, instructions: mode.instructions, dispose }
}

/** Each tool by the id programs call it by (`external_<id>`): its `id`, else its key. */
function toolsById(config) {
  return new Map(Object.entries(config?.tools ?? {}).map(([key, candidate]) => [candidate?.id ?? key, candidate]))
}

/** A tool's approval rule: `needsApprovalFn` (what Mastra makes of a function), else `requireApproval`. */
function needsApprovalRule(candidate) {
  const rule = candidate?.needsApprovalFn ?? candidate?.requireApproval
  return typeof rule === 'function' || rule === true ? rule : undefined
}

/** One execution of the code tool: a first attempt, or the resumed attempt of an approved call. */
async function runWithApprovals({ code, context, tools, transport, journals, timeout, durable }) {
  const agent = context?.agent
  const key = agent?.toolCallId === undefined ? undefined : `${context.runId}/${agent.toolCallId}`
  const entry = key === undefined ? undefined : await storedRun(journals, key)
  // Mastra runs the code tool again only once the user approved the call it paused at.
  const resumed = entry?.kind === 'approval' && entry.code === code ? entry : undefined
  const approved = resumed === undefined ? undefined : { ...resumed.paused, used: false }
  const dispatch = async (toolId, input) => {
    const target = tools.get(toolId)
    if (typeof target?.execute !== 'function') throw new Error(`Tool "${toolId}" is not available in Code Mode`)
    const rule = needsApprovalRule(target)
    if (rule !== undefined) {
      const needed = async () => (typeof rule === 'function' ? (await rule(input, { workspace: context?.workspace })) === true : true)
      if (!durable && (await needed())) {
        throw new Error(
          `Tool "${toolId}" needs approval, which this runtime cannot ask for (it has no runDurable()): the call did not run`,
        )
      }
      await approveOrPause(toolId, input, approved, needed)
    }
    const value = await target.execute(input, {
      mastra: context?.mastra,
      requestContext: context?.requestContext,
      abortSignal: context?.abortSignal,
      workspace: context?.workspace,
    })
    if (isValidationError(value)) throw new Error(value.message ?? `Invalid input for tool "${toolId}"`)
    return value
  }
  const observe = context?.observe
  const request = {
    program: code,
    toolIds: [...tools.keys()],
    dispatch,
    timeout,
    abortSignal: context?.abortSignal,
    onExternalCall: (name, args) => observe?.log?.('info', 'code-mode external call', { tool: name, args }),
    onExternalResult: (name, durationMs, error) => observe?.log?.(error ? 'error' : 'info', 'code-mode external result', { tool: name, durationMs }),
  }
  const result = durable ? await transport.runDurable(request, resumed?.journal) : await transport.run(request)
  const { journal, suspended, ...outcome } = result
  if (suspended === undefined) {
    if (resumed !== undefined) await journals.delete(key)
    return outcome
  }
  if (key === undefined || typeof agent.suspend !== 'function') {
    return {
      success: false,
      error: {
        name: 'ApprovalUnavailableError',
        message:
          `${PREFIX}the program called ${suspended.tool}, which needs approval, outside an agent run that can suspend; ` +
          'nothing after that call ran. Run the code tool from a Mastra agent to ask the user.',
      },
      logs: outcome.logs,
    }
  }
  await journals.set(key, pausedRun('approval', code, { journal, suspended: { data: suspended } }))
  return agent.suspend(suspended, { requireToolApproval: { toolName: suspended.tool, args: suspended.input } })
}
