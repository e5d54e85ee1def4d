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
