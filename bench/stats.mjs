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

/**
 * `runs` samples (ms) of each candidate (an async function), the candidates taking turns
 * (`inTurn`). Paced (`paceMs` > 0): one run of each per turn, `paceMs` before it. Back to back:
 * `block` runs of one candidate per turn, the first of which (it follows another candidate's
 * block) is not a sample, so each sample follows a run of its own candidate, as a host's runs
 * back to back do (one run of each in turn would leave each the others' runs to get ready).
 */
export async function takeTurns(candidates, { runs, paceMs = 0, block = 10 }) {
  const samples = Object.fromEntries(Object.keys(candidates).map((k) => [k, []]))
  const perTurn = paceMs ? 1 : block
  for (let turn = 0; Object.values(samples).some((xs) => xs.length < runs); turn++) {
    for (const [name, fn] of inTurn(candidates, turn)) {
      for (let i = 0; i < perTurn; i++) {
        if (paceMs) await new Promise((resolve) => setTimeout(resolve, paceMs))
        const start = performance.now()
        await fn()
        if (paceMs || i > 0) samples[name].push(performance.now() - start)
      }
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, xs.slice(0, runs)]))
}
