// The Vercel AI SDK with a code-runtime-native code tool:
//   npm install code-runtime-native cordis ai zod
import { generateText, isStepCount, tool } from 'ai'
import { z } from 'zod'
import { codeRuntimeTool } from 'code-runtime-native/ai-sdk'
import { TEMPERATURES, scriptedModel } from './scripted-model.mjs'

// What a model writes: two forecasts at once, then a comparison.
const program = `const [lisbon, oslo] = await Promise.all([tools.forecast({ city: 'Lisbon' }), tools.forecast({ city: 'Oslo' })])
console.log('Lisbon', lisbon.celsius, 'Oslo', oslo.celsius)
return { warmer: lisbon.celsius > oslo.celsius ? 'Lisbon' : 'Oslo' }`

const forecast = tool({
  description: 'The forecast for a city.',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: TEMPERATURES[city] }),
})

const code = codeRuntimeTool({ tools: { forecast }, config: { computeMs: 10_000 } })
const result = await generateText({
  model: scriptedModel('code', { code: program }),
  tools: { code },
  stopWhen: isStepCount(2),
  timeout: { toolMs: 30_000 },
  prompt: 'Is Lisbon or Oslo warmer?',
})
console.log(JSON.stringify(result.steps[0].toolResults[0].output))
console.log(result.text)
await code.dispose()
