// `code-runtime-native/ai-sdk`: an AI SDK tool (`ai` 7) that runs one model-written program
// against a `ToolSet`. The program calls each tool as `await tools.<name>(input)` (the global
// `tools`, as in the SDK's own code mode); a call runs the tool the way `generateText` would:
// its input validated by its schema, `execute(input, { toolCallId, messages, abortSignal,
// context })`, a streaming tool's last output. A failed tool rejects with a `ToolCallError` the
// program can catch. A failed program throws a `CodeRunError` that keeps the runtime's failure
// kind, which the SDK reports as the call's `tool-error`. The time limit is the tool call's
// `abortSignal` (`generateText({ timeout })`) and, when given, `timeoutMs`.
import { asSchema, jsonSchema, tool } from 'ai'
import { PREFIX } from '../request.mjs'
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
 *   description?: string, timeoutMs?: number }} options
 */
export function codeRuntimeTool(options) {
  const toolSet = options?.tools
  if (toolSet === null || typeof toolSet !== 'object') {
    throw new TypeError(`${PREFIX}codeRuntimeTool: options.tools must be an AI SDK ToolSet (an object of tools)`)
  }
  const runtime = new AdapterRuntime(options, 'code-runtime-native/ai-sdk', ['typescript', 'python'])
  const language = options.runtime?.language ?? 'typescript'
  const callable = callableTools(toolSet)
  let calls = 0
  const codeTool = tool({
    description: options.description ?? describeTools(callable, language),
    inputSchema: jsonSchema({
      type: 'object',
      properties: { code: { type: 'string', description: `The ${LANGUAGE_NAMES[language]} program to run.` } },
      required: ['code'],
      additionalProperties: false,
    }),
    async execute({ code }, outer) {
      const functions = Object.create(null)
      for (const [name, nested] of callable) {
        functions[name] = (input) => runNested(name, nested, input, { ...outer, toolCallId: `${outer.toolCallId}/${name}/${++calls}` })
      }
      const result = await runtime.run({
        program: code,
        bindings: [{ global: 'tools', functions, errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' } }],
        signal: outer.abortSignal,
        timeoutMs: options.timeoutMs,
      })
      if (result.error !== undefined) throw new CodeRunError(result.error, result.logs)
      return 'value' in result ? { logs: result.logs, value: result.value } : { logs: result.logs }
    },
  })
  // Not enumerable: the SDK reads tools' own fields, and a tool stays a plain AI SDK tool.
  Object.defineProperty(codeTool, 'dispose', { value: () => runtime.dispose() })
  return codeTool
}

/**
 * The tools a program may call: executed by the SDK (an `execute`), not awaiting an approval the
 * program could not ask for.
 */
function callableTools(toolSet) {
  return Object.entries(toolSet).filter(
    ([, candidate]) => typeof candidate?.execute === 'function' && (candidate.needsApproval === undefined || candidate.needsApproval === false),
  )
}

/** One tool call of the program, as the SDK makes it. */
async function runNested(name, nested, input, options) {
  let value = input
  const schema = nested.inputSchema === undefined ? undefined : asSchema(nested.inputSchema)
  if (schema?.validate !== undefined) {
    const checked = await schema.validate(input)
    if (!checked.success) throw new Error(`Invalid input for tool ${JSON.stringify(name)}: ${checked.error.message}`)
    value = checked.value
  }
  const output = nested.execute(value, options)
  if (output !== null && typeof output === 'object' && typeof output[Symbol.asyncIterator] === 'function') {
    let last
    for await (const part of output) last = part
    return last
  }
  return output
}

/** The tool's description for the model: the language, the `tools` global, each tool's input. */
function describeTools(callable, language) {
  const lines = callable.map(([name, nested]) => {
    const schema = nested.inputSchema === undefined ? undefined : asSchema(nested.inputSchema).jsonSchema
    const input = schema !== undefined && typeof schema?.then !== 'function' ? ` Input (JSON Schema): ${JSON.stringify(schema)}` : ''
    const about = typeof nested.description === 'string' ? ` ${nested.description}` : ''
    return `- tools[${JSON.stringify(name)}](input):${about}${input}`
  })
  const print = language === 'python' ? 'print()' : 'console.log()'
  return [
    `Run one ${LANGUAGE_NAMES[language]} program in a fresh sandbox and get back what it printed and returned.`,
    'The program calls tools as async functions of the global `tools` (`await tools.name(input)`, one JSON argument',
    'each; run independent calls concurrently). A failed call raises ToolCallError (its `toolName` says which).',
    `End with \`return <value>\` (JSON data); ${print} output is returned too. No network, files or imports.`,
    'Tools:',
    ...lines,
  ].join('\n')
}
