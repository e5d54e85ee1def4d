// `code-runtime-native/ai-sdk`: an AI SDK tool (`ai` 7) that runs one model-written program
// against a `ToolSet`. The program calls each tool as `await tools.<name>(input)` (the global
// `tools`, as in the SDK's own code mode); a call runs the tool the way `generateText` would:
// its input validated by its schema, `execute(input, { toolCallId, messages, abortSignal,
// context })`, a streaming tool's last output. A failed tool rejects with a `ToolCallError` the
// program can catch. A failed program throws a `CodeRunError` that keeps the runtime's failure
// kind, which the SDK reports as the call's `tool-error`. The time limit is the tool call's
// `abortSignal` (`generateText({ timeout })`) and, when given, `timeoutMs`. Tools that need
// approval are called through the SDK's own approval flow (lib/adapters/ai-sdk-approval.mjs).
import { asSchema, jsonSchema, tool } from 'ai'
import { PREFIX } from '../request.mjs'
import { ApprovalFlow, callNeedsApproval, needsApprovalOf } from './ai-sdk-approval.mjs'
import { approveOrPause } from './approval.mjs'
import { AdapterRuntime } from './runtime.mjs'

const LANGUAGE_NAMES = { typescript: 'TypeScript', python: 'Python' }

/** A failed program: `kind` is the runtime's failure kind, `logs` what it printed first. */
export class CodeRunError extends Error {
  constructor(failure, logs) {
    const printed = logs.length > 0 ? `\n\nConsole output:\n${logs.join('\n')}` : ''
    super(`code run failed (${failure.kind}): ${failure.message}${printed}`)
    this.name = 'CodeRunError'
    this.kind = failure.kind
    this.logs = logs
  }
}

/**
 * @param {{ tools: Record<string, object>, runtime?: object, config?: object,
 *   description?: string, timeoutMs?: number, approvals?: boolean, journals?: object }} options
 */
export function codeRuntimeTool(options) {
  const toolSet = options?.tools
  if (toolSet === null || typeof toolSet !== 'object') {
    throw new TypeError(`${PREFIX}codeRuntimeTool: options.tools must be an AI SDK ToolSet (an object of tools)`)
  }
  const wanted = readApprovals(options)
  const runtime = new AdapterRuntime(options, 'code-runtime-native/ai-sdk', ['typescript', 'python'])
  // Tools that need approval are offered only where programs can pause (docs/durable.md#the-ai-sdk).
  const approvals = wanted && runtime.durable
  const language = options.runtime?.language ?? 'typescript'
  const callable = executable(toolSet).filter(([, nested]) => !needsApprovalOf(nested))
  const gated = approvals ? executable(toolSet).filter(([, nested]) => needsApprovalOf(nested)) : []
  let calls = 0
  /** The `tools` namespace of one run; `approved` (a durable attempt's) lets that one call through. */
  const bindings = (outer, approved) => {
    const functions = Object.create(null)
    // The SDK gives `needsApproval` no abortSignal; the calls of a program it runs get one all the
    // same (one that never fires: that program is bounded by the tool's timeoutMs).
    const abortSignal = outer.abortSignal ?? new AbortController().signal
    const callOptions = (name) => ({ ...outer, abortSignal, toolCallId: `${outer.toolCallId}/${name}/${++calls}` })
    for (const [name, nested] of callable) {
      functions[name] = async (input) => executeNested(nested, await checkedInput(name, nested, input), callOptions(name))
    }
    for (const [name, nested] of gated) {
      functions[name] = async (input) => {
        const nestedOptions = callOptions(name)
        const checked = await checkedInput(name, nested, input)
        await approveOrPause(name, input, approved, () => callNeedsApproval(nested, checked, nestedOptions))
        return executeNested(nested, checked, nestedOptions)
      }
    }
    return [{ global: 'tools', functions, errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' } }]
  }
  const request = (code, outer, approved) => ({
    program: code,
    bindings: bindings(outer, approved),
    signal: outer.abortSignal,
    timeoutMs: options.timeoutMs,
  })
  const definition = {
    description: options.description ?? describeTools(callable, gated, language),
    inputSchema: jsonSchema({
      type: 'object',
      properties: { code: { type: 'string', description: `The ${LANGUAGE_NAMES[language]} program to run.` } },
      required: ['code'],
      additionalProperties: false,
    }),
    async execute({ code }, outer) {
      return output(await runtime.run(request(code, outer)))
    },
  }
  let flow
  if (gated.length > 0) {
    flow = new ApprovalFlow({
      attempt: (code, outer, journal, approved) => runtime.runDurable(request(code, outer, approved), journal),
      store: options.journals,
    })
    definition.needsApproval = (input, outer) => flow.needsApproval(input, outer)
    definition.execute = async (input, outer) => output(await flow.execute(input, outer))
  }
  const codeTool = tool(definition)
  // Not enumerable: the SDK reads tools' own fields, and a tool stays a plain AI SDK tool.
  Object.defineProperty(codeTool, 'dispose', { value: () => runtime.dispose() })
  Object.defineProperty(codeTool, 'suspension', { value: async (toolCallId) => flow?.suspension(toolCallId) })
  return codeTool
}

/** `options.approvals` (default `true`): whether tools that need approval are offered. */
function readApprovals(options) {
  const approvals = options.approvals ?? true
  if (typeof approvals !== 'boolean') {
    throw new TypeError(`${PREFIX}codeRuntimeTool: options.approvals must be a boolean (whether tools that need approval are offered)`)
  }
  return approvals
}

/** What the model gets of a run: what it printed and returned, or where it paused; a failure throws. */
function output(result) {
  if ('suspended' in result) {
    const { tool: name, input } = result.suspended.data
    return {
      logs: result.logs,
      suspended: { tool: name, input },
      message:
        `The program paused at tools[${JSON.stringify(name)}](...), which needs the user's approval; the calls before it ran once ` +
        'and will not run again. To go on, call this tool again with exactly the same code: the user is then asked to approve that call.',
    }
  }
  if (result.error !== undefined) throw new CodeRunError(result.error, result.logs)
  return 'value' in result ? { logs: result.logs, value: result.value } : { logs: result.logs }
}

/** The tools a program may call: executed by the SDK (an `execute`), not client-side ones. */
function executable(toolSet) {
  return Object.entries(toolSet).filter(([, candidate]) => typeof candidate?.execute === 'function')
}

/** A program's input to `name`, as its schema reads it; a mismatch fails the call. */
async function checkedInput(name, nested, input) {
  const schema = nested.inputSchema === undefined ? undefined : asSchema(nested.inputSchema)
  if (schema?.validate === undefined) return input
  const checked = await schema.validate(input)
  if (!checked.success) throw new Error(`Invalid input for tool ${JSON.stringify(name)}: ${checked.error.message}`)
  return checked.value
}

/** One tool call of the program, as the SDK makes it: a streaming tool's last output. */
async function executeNested(nested, input, options) {
  const output = nested.execute(input, options)
  if (output !== null && typeof output === 'object' && typeof output[Symbol.asyncIterator] === 'function') {
    let last
    for await (const part of output) last = part
    return last
  }
  return output
}

/** The tool's description for the model: the language, the `tools` global, each tool's input. */
function describeTools(callable, gated, language) {
  const line = (approval) => ([name, nested]) => {
    const schema = nested.inputSchema === undefined ? undefined : asSchema(nested.inputSchema).jsonSchema
    const input = schema !== undefined && typeof schema?.then !== 'function' ? ` Input (JSON Schema): ${JSON.stringify(schema)}` : ''
    const about = typeof nested.description === 'string' ? ` ${nested.description}` : ''
    return `- tools[${JSON.stringify(name)}](input):${approval}${about}${input}`
  }
  const print = language === 'python' ? 'print()' : 'console.log()'
  const approvals =
    gated.length === 0
      ? []
      : [
          'Tools marked (needs approval) ask the user first: the program pauses at such a call until the user answers,',
          'and the calls before it are not repeated.',
        ]
  return [
    `Run one ${LANGUAGE_NAMES[language]} program in a fresh sandbox and get back what it printed and returned.`,
    'The program calls tools as async functions of the global `tools` (`await tools.name(input)`, one JSON argument',
    'each; run independent calls concurrently). A failed call raises ToolCallError (its `toolName` says which).',
    `End with \`return <value>\` (JSON data); ${print} output is returned too. No network, files or imports.`,
    ...approvals,
    'Tools:',
    ...callable.map(line('')),
    ...gated.map(line(' (needs approval)')),
  ].join('\n')
}
