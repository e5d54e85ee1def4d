// The clause a timeout's message gains (docs/tracing.md#the-timeouts-clause): where the program
// was stopped and which of its tool calls were still pending, so a model can act on it:
// `compute budget exhausted (1000ms busy) at program.ts:12:5 in score(); 2 tool calls pending:
// tools.search, tools.fetch`.

/** Pending calls named in the clause at most; more show as `…`. */
export const MAX_NAMED_CALLS = 3

/** The file a language's frames are in, as its own errors name it. */
const FILE = Object.freeze({ typescript: 'program.ts', python: '<model>' })

/**
 * The clause for a run's frozen `stats` (`''` when there is nothing to say): ` at <file>:<line>:<column>
 * in <name>()` when it was stopped in its own code, `; <n> tool call(s) pending: <names>` when
 * calls were in flight (among the recorded ones, in call order).
 */
export function stopClause(language, stats) {
  let clause = ''
  const at = stats.stoppedAt
  if (at !== undefined) {
    clause += ` at ${FILE[language]}:${at.line}:${at.column}`
    const name = at.functionName
    if (name !== undefined) clause += name.startsWith('<') ? ` in ${name}` : ` in ${name}()`
  }
  const pending = stats.calls.filter((call) => call.outcome === 'abandoned')
  if (pending.length > 0) {
    const names = pending.slice(0, MAX_NAMED_CALLS).map((call) => call.name)
    if (pending.length > MAX_NAMED_CALLS) names.push('…')
    clause += `; ${pending.length} tool call${pending.length === 1 ? '' : 's'} pending: ${names.join(', ')}`
  }
  return clause
}

const BufferByteLength = Buffer.byteLength
const JSONStringify = JSON.stringify

/** `B(JSON.stringify(text))`: the bytes the output ledger charges for a string. */
const quotedBytes = (text) => BufferByteLength(JSONStringify(text), 'utf8')

/**
 * Whether `message` fits an output budget of `cap` beside `logs`, as the ledger counts them
 * (docs/budgets-and-ledger.md#the-output-ledger): `B(JSON.stringify(logs)) +
 * B(JSON.stringify(message)) <= cap`. Each entry costs at most six bytes a unit plus its quotes,
 * so the exact count runs only when that bound does not already fit.
 */
export function fitsBesideLogs(logs, message, cap) {
  const room = cap - quotedBytes(message)
  if (room < 2) return false
  let bound = 2 + Math.max(0, logs.length - 1)
  for (const entry of logs) bound += 6 * entry.length + 2
  if (bound <= room) return true
  let used = 2 + Math.max(0, logs.length - 1)
  for (const entry of logs) {
    used += quotedBytes(entry)
    if (used > room) return false
  }
  return true
}
