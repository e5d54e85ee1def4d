// Compiled with `tsc --strict` by adapter-types.test.mjs: each adapter plugs into its framework
// as the framework's own types declare the seam (Mastra 1.71.0, TanStack AI Code Mode 0.3.4,
// Cloudflare codemode 0.5.6, ai 7.0.173).
import { createCodeMode as mastraCodeMode, createTool, type CodeModeTransport } from '@mastra/core/tools'
import { toolDefinition } from '@tanstack/ai'
import { createCodeMode as tanstackCodeMode, type IsolateDriver } from '@tanstack/ai-code-mode'
import { createBrowserCodeTool, type Executor } from '@cloudflare/codemode/browser'
import { generateText, tool, type ToolSet } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { z } from 'zod'
import { Agent } from '@mastra/core/agent'
import { CodeRuntimeTransport, createCodeMode } from 'code-runtime-native/mastra'
import { createCodeRuntimeDriver } from 'code-runtime-native/tanstack'
import { CodeRuntimeExecutor } from 'code-runtime-native/cloudflare'
import { CodeRunError, codeRuntimeTool, type CodeRunOutput, type CodeRuntimeTool, type PausedCodeRun } from 'code-runtime-native/ai-sdk'
import type { PtcRunFailureKind } from 'code-runtime-native'

// skipLibCheck skips ai-sdk.d.ts too (ai's own declarations need @types/node, which the strict
// project does not load), where a broken type would silently be `any`: each of these must fail.
// @ts-expect-error a number is not a code tool
export const notATool: CodeRuntimeTool = 5
// @ts-expect-error an output has logs
export const notAnOutput: CodeRunOutput = { value: 1 }
// @ts-expect-error a kind is one of the seam's
export const notAKind: CodeRunError['kind'] = 'no-such-kind'
export const aKind: PtcRunFailureKind = null as unknown as CodeRunError['kind']

export function mastra(): string {
  const transport: CodeModeTransport = new CodeRuntimeTransport({ config: { computeMs: 1000 } })
  const weather = createTool({ id: 'weather', description: 'Weather.', inputSchema: z.object({ city: z.string() }), execute: async () => 'sunny' })
  const send = createTool({ id: 'send', description: 'Sends.', inputSchema: z.object({ to: z.string() }), requireApproval: true, execute: async () => 'sent' })
  const mode = createCodeMode({ tools: { weather, send }, timeout: 5000 }, { config: { computeMs: 1000 }, journals: new Map<string, PausedCodeRun>() })
  const agent = new Agent({ id: 'coder', name: 'coder', instructions: mode.instructions, model: 'openai/gpt-4o', tools: { [mode.tool.id]: mode.tool } })
  void agent
  void mode.dispose()
  return mastraCodeMode({ tools: { weather } }, transport).instructions
}

export function tanstack(): string {
  const driver: IsolateDriver = createCodeRuntimeDriver({ timeout: 5000 })
  const weather = toolDefinition({ name: 'weather', description: 'Weather.', inputSchema: z.object({ city: z.string() }) }).server(async () => 'sunny')
  return tanstackCodeMode({ driver, tools: [weather] }).systemPrompt
}

export function cloudflare(): string {
  const executor: Executor = new CodeRuntimeExecutor({ timeout: 5000 })
  const tool = createBrowserCodeTool({ tools: { weather: { description: 'Weather.', inputSchema: { type: 'object' }, execute: async () => 'sunny' } }, executor })
  return tool.description
}

export async function aiSdk(): Promise<string> {
  const weather = tool({ description: 'Weather.', inputSchema: z.object({ city: z.string() }), execute: async () => 'sunny' })
  const code = codeRuntimeTool({ tools: { weather }, timeoutMs: 10000 })
  const tools = { code, weather } satisfies ToolSet
  const result = await generateText({ model: new MockLanguageModelV4(), tools, prompt: 'Weather?', timeout: { toolMs: 30000 } })
  for (const part of result.steps[0]?.content ?? []) {
    if (part.type === 'tool-error' && part.error instanceof CodeRunError) return part.error.kind
  }
  const direct: CodeRunOutput | AsyncIterable<CodeRunOutput> | PromiseLike<CodeRunOutput> | undefined = await code.execute?.(
    { code: 'return 1' },
    { toolCallId: 'c', messages: [], context: undefined },
  )
  void direct
  const journals = new Map<string, PausedCodeRun>()
  const gated = codeRuntimeTool({ tools: { weather }, approvals: true, journals })
  const waiting: { tool: string; input: unknown } | undefined = await gated.suspension('c')
  void waiting
  // @ts-expect-error approvals is a boolean
  codeRuntimeTool({ tools: { weather }, approvals: 'yes' })
  await gated.dispose()
  await code.dispose()
  return result.text
}
