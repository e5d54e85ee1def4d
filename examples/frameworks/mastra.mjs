// Mastra Code Mode with code-runtime-native as its transport:
//   npm install code-runtime-native cordis @mastra/core zod
// Each program the agent writes runs in a fresh V8 isolate (no workspace sandbox needed).
import { Agent } from '@mastra/core/agent'
import { createCodeMode, createTool } from '@mastra/core/tools'
import { z } from 'zod'
import { CodeRuntimeTransport } from 'code-runtime-native/mastra'
import { TEMPERATURES, scriptedModel } from './scripted-model.mjs'

// What a model writes: two forecasts at once, then a comparison.
const program = `const [lisbon, oslo] = await Promise.all([external_forecast({ city: 'Lisbon' }), external_forecast({ city: 'Oslo' })])
console.log('Lisbon', lisbon.celsius, 'Oslo', oslo.celsius)
return { warmer: lisbon.celsius > oslo.celsius ? 'Lisbon' : 'Oslo' }`

const forecast = createTool({
  id: 'forecast',
  description: 'The forecast for a city.',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: TEMPERATURES[city] }),
})

const transport = new CodeRuntimeTransport({ config: { computeMs: 10_000 } })
const { tool, instructions } = createCodeMode({ tools: { forecast } }, transport)
const agent = new Agent({
  id: 'weather',
  name: 'weather',
  instructions: ['You answer weather questions.', instructions],
  model: scriptedModel('execute_typescript', { code: program }),
  tools: { [tool.id]: tool },
})

const result = await agent.generate('Is Lisbon or Oslo warmer?')
console.log(JSON.stringify(result.toolResults[0].payload.result))
console.log(result.text)
await transport.dispose()
