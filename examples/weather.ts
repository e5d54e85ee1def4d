// Calls host tools as ordinary async functions; failed calls throw ToolCallError.
type Forecast = { city: string; celsius: number }

const cities = ['Lisbon', 'Oslo', 'Atlantis']
const forecasts: Forecast[] = []
for (const city of cities) {
  try {
    forecasts.push(await tools.forecast({ city }))
  } catch (error) {
    if (error instanceof ToolCallError) console.log(`skipped ${city}: ${error.message} (${error.toolName})`)
    else throw error
  }
}
const warmest = forecasts.reduce((a, b) => (b.celsius > a.celsius ? b : a))
console.log('warmest:', warmest.city)
return { warmest, checked: forecasts.length }
