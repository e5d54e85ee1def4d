// Bindings for examples/weather.ts: the namespaces a host would pass in CodeRunRequest.bindings.
const temperatures = { Lisbon: 21, Oslo: 4 }

export default [
  {
    global: 'tools',
    functions: {
      async forecast({ city }) {
        if (!(city in temperatures)) throw new Error(`no forecast for ${city}`)
        return { city, celsius: temperatures[city] }
      },
    },
    errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' },
  },
]
