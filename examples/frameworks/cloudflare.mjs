// Cloudflare's Code Mode on Node with code-runtime-native as its executor:
//   npm install code-runtime-native cordis @cloudflare/codemode @tanstack/ai zod
// (on Node, use the package's /tanstack-ai or /browser entry points: the others need Workers).
import { toolDefinition } from '@tanstack/ai'
import { createCodeTool, tanstackTools } from '@cloudflare/codemode/tanstack-ai'
import { z } from 'zod'
import { CodeRuntimeExecutor } from 'code-runtime-native/cloudflare'
import { TEMPERATURES } from './scripted-model.mjs'

// What a model writes: an async arrow function, two forecasts at once, then a comparison.
const program = `async () => {
  const [lisbon, oslo] = await Promise.all([codemode.forecast({ city: 'Lisbon' }), codemode.forecast({ city: 'Oslo' })])
  console.log('Lisbon', lisbon.celsius, 'Oslo', oslo.celsius)
  return { warmer: lisbon.celsius > oslo.celsius ? 'Lisbon' : 'Oslo' }
}`

const forecast = toolDefinition({
  name: 'forecast',
  description: 'The forecast for a city.',
  inputSchema: z.object({ city: z.string() }),
}).server(async ({ city }) => ({ city, celsius: TEMPERATURES[city] }))

const executor = new CodeRuntimeExecutor({ timeout: 30_000, config: { computeMs: 10_000 } })
const codemode = createCodeTool({ tools: [tanstackTools([forecast])], executor })
// Pass `codemode` to chat({ adapter, tools: [codemode], messages }); here it runs as chat() runs it.
const result = await codemode.execute({ code: program })
console.log(JSON.stringify(result))
await executor.dispose()
