// Shared pieces of the framework adapter suites (adapter-*.test.mjs): tools that record how they
// were called, and the bookkeeping that proves every test of a suite ran.
import { setTimeout as sleep } from 'node:timers/promises'
import { expect } from 'vitest'

/** The compute budget the suites give their runtimes (a `while (true) {}` ends at it). */
export const COMPUTE_MS = 300

/**
 * Host functions that record their calls in order and how many ran at once: `slow` calls wait
 * 30 ms, so two calls made together overlap and two made one after the other never do.
 */
export function recorder() {
  const calls = []
  let running = 0
  let most = 0
  const track = async (name, input, value) => {
    calls.push([name, input])
    running += 1
    most = Math.max(most, running)
    await sleep(30)
    running -= 1
    return value
  }
  return { calls, track, mostAtOnce: () => most }
}

/**
 * Records which tests of a suite ran; `check()` (in `afterAll`) fails unless exactly the named
 * tests ran, so a test that was skipped or never reached fails the file.
 */
export function ledger(names) {
  const ran = []
  return {
    ran: (name) => ran.push(name),
    check: () => expect([...ran].sort()).toEqual([...names].sort()),
  }
}
