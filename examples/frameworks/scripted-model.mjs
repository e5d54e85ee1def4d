// Stands in for your LLM in these examples, so they run offline: an AI SDK test model (`ai/test`)
// that answers the first request with one call of `toolName` with `input`, and the next with text.
// In your application, pass your provider's model instead (e.g. `openai('gpt-5')`).
import { MockLanguageModelV4 } from 'ai/test'

const USAGE = {
  inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 0, text: 0, reasoning: undefined },
}

export function scriptedModel(toolName, input) {
  const answers = [
    { content: [{ type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) }], finishReason: { unified: 'tool-calls', raw: undefined } },
    { content: [{ type: 'text', text: 'Lisbon is warmer.' }], finishReason: { unified: 'stop', raw: undefined } },
  ]
  return new MockLanguageModelV4({ doGenerate: async () => ({ ...answers.shift(), usage: USAGE, warnings: [] }) })
}

/** The forecasts the examples' `forecast` tool knows. */
export const TEMPERATURES = { Lisbon: 21, Oslo: 4 }
