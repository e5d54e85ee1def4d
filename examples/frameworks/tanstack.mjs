// TanStack AI Code Mode with code-runtime-native as its isolate driver:
//   npm install code-runtime-native cordis @tanstack/ai @tanstack/ai-code-mode zod
import { toolDefinition } from '@tanstack/ai'
import { createCodeMode } from '@tanstack/ai-code-mode'
import { z } from 'zod'
import { createCodeRuntimeDriver } from 'code-runtime-native/tanstack'
import { TEMPERATURES } from './scripted-model.mjs'

// What a model writes: two forecasts at once, then a comparison.
const program = `const [lisbon, oslo] = await Promise.all([external_forecast({ city: 'Lisbon' }), external_forecast({ city: 'Oslo' })])
console.log('Lisbon', lisbon.celsius, 'Oslo', oslo.celsius)
return { warmer: lisbon.celsius > oslo.celsius ? 'Lisbon' : 'Oslo' }`

const forecast = toolDefinition({
  name: 'forecast',
  description: 'The forecast for a city.',
  inputSchema: z.object({ city: z.string() }),
}).server(async ({ city }) => ({ city, celsius: TEMPERATURES[city] }))

const driver = createCodeRuntimeDriver({ config: { computeMs: 10_000 } })
const { tool, systemPrompt } = createCodeMode({ driver, tools: [forecast], timeout: 30_000 })
// Pass `tool` and `systemPrompt` to chat({ adapter, tools: [tool], systemPrompts: [systemPrompt], messages });
// here the tool runs as chat() runs it when the model calls execute_typescript.
void systemPrompt
const result = await tool.execute({ typescriptCode: program })
console.log(JSON.stringify(result))
await driver.dispose()
