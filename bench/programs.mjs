// Programs the benchmarks share.

/**
 * The work an agent sends (issue 29): three functions, an object of `entries` entries built,
 * summarised and sorted, `JSON.stringify` of the whole (about 80 bytes an entry), one
 * `console.log` line, a structured result `{ size, top }` (`top`: five names).
 */
export function realisticProgram(entries = 1000) {
  return `
function makeEntry(i) {
  return { id: i, name: 'item-' + i, score: (i * 37) % 101, tags: ['a', 'b', String(i % 7)], active: i % 3 !== 0 }
}
function summarize(entries) {
  const byTag = {}
  for (const e of entries) for (const t of e.tags) byTag[t] = (byTag[t] ?? 0) + 1
  const top = entries.filter((e) => e.active).sort((a, b) => b.score - a.score || a.id - b.id).slice(0, 5).map((e) => e.name)
  return { byTag, top }
}
function render(summary, text) {
  return 'tags ' + Object.keys(summary.byTag).length + ', top ' + summary.top.join(',') + ', ' + text.length + ' bytes'
}
const data = {}
for (let i = 0; i < ${entries}; i++) data['k' + i] = makeEntry(i)
const summary = summarize(Object.values(data))
const text = JSON.stringify(data)
console.log(render(summary, text))
return { size: text.length, top: summary.top }
`
}

/**
 * Long computations (tens of milliseconds), where V8's optimising tiers pay back: a numeric loop
 * (on-stack replacement), a recursive function called 300 000 times, string building, and the
 * realistic program at 20 000 entries. Each returns a value the benchmark checks.
 */
export const computePrograms = {
  'numeric loop': { program: 'let s = 0; for (let i = 0; i < 3e7; i++) s += i % 7; return s', value: 89999995 },
  'fib(27)': { program: 'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }\nreturn fib(27)', value: 196418 },
  strings: {
    program: 'const parts = []\nfor (let i = 0; i < 200000; i++) parts.push(("x" + i).toUpperCase().slice(1))\nreturn parts.join("").length',
    value: 1088890,
  },
  'realistic, 20 000 entries': { program: realisticProgram(20000), value: undefined },
}
