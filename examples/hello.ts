// The body of an async function: top-level await and return work, types are stripped.
interface Greeting {
  to: string
  times: number
}

const greeting: Greeting = { to: 'world', times: 2 }
for (let i = 0; i < greeting.times; i++) {
  console.log(`hello, ${greeting.to}!`, { round: i + 1 })
}
await new Promise((resolve) => setTimeout(resolve, 10))
return { greeted: greeting.to, rounds: greeting.times }
