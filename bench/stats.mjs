// Small statistics helpers shared by the benchmarks.

/** The q-quantile (0..1) of a list of numbers, nearest-rank. */
export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank]
}

export const p50 = (values) => quantile(values, 0.5)
export const p99 = (values) => quantile(values, 0.99)

/** Milliseconds with two decimals. */
export const ms = (n) => `${n.toFixed(2)} ms`
/** Microseconds with one decimal. */
export const us = (n) => `${(n * 1000).toFixed(1)} µs`

/**
 * The entries of `candidates` in their order for round `i`: each takes every place in turn, so
 * no candidate always runs right after the same other one, whose leftover work (a process's
 * exit, a spare's start) would otherwise always fall on that one's samples.
 */
export function inTurn(candidates, i) {
  const entries = Object.entries(candidates)
  const first = i % entries.length
  return [...entries.slice(first), ...entries.slice(0, first)]
}
