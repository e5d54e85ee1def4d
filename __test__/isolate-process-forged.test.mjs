// A subverted sandbox process (issue 9): the helper's forge mode boots and hardens itself exactly
// as a serving process does, takes its run, and then sends what code that took over the process
// could send instead of honest frames. The host's supervisor must re-check every byte: a frame
// that does not decode, names no declared binding, exceeds its cap, or breaks the run's order
// ends the run and kills the process; a log flood is re-metered by the host's own ledger; the
// binding is never called; and no process is left. The harness shows the native report, whose
// kind `protocol` marks the breach: `ctx.codeRuntime` reports it as `worker-exit` with the same
// message, `ctx.ptcRuntime` as `protocol` (lib/session.mjs; both seams with a real Python cause:
// ptc-failures.test.mjs).
import fs from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import native from '../lib/native.mjs'
import { PROTOCOL_BREACHES } from './forged-scenarios.mjs'
import { loadIsolate } from './helpers.mjs'
import { sandboxProcesses } from './process-helpers.mjs'

vi.setConfig({ testTimeout: 60_000 })
const MAX_OUTPUT_BYTES = 4096
const forge = (scenario) => JSON.parse(native.forgeContainedIsolateRun(scenario, MAX_OUTPUT_BYTES))
const broke = (what) => ({
  logs: [],
  error: { kind: 'protocol', message: `isolate process broke the channel protocol (${what}); it was killed` },
})

describe.runIf(native.containedIsolatesAvailable())('a subverted sandbox process', () => {
  it.each(PROTOCOL_BREACHES)('%s: the run ends marked protocol, the binding is never called, the process is gone', (scenario, what) => {
    const report = forge(scenario)
    expect(report.result).toEqual(broke(what))
    expect(report.calls).toBe(0)
    expect(report.processesLeft).toBe(0)
  })

  it('a log flood is re-metered by the host: what is kept fits the budget, then output-limit', () => {
    const report = forge('log-flood')
    expect(report.result.error).toEqual({ kind: 'output-limit', message: `outer output exceeded ${MAX_OUTPUT_BYTES} bytes` })
    expect(report.result.logs.length).toBeGreaterThan(0)
    expect(report.result.logs.length).toBeLessThan(200)
    expect(JSON.stringify(report.result.logs).length).toBeLessThanOrEqual(MAX_OUTPUT_BYTES)
    // Whole entries in order; the one that overflowed keeps the prefix that fit
    // (docs/budgets-and-ledger.md#the-limit-result).
    const expected = (i) => `line ${String(i).padStart(3, '0')} ${'y'.repeat(90)}`
    const logs = report.result.logs
    logs.slice(0, -1).forEach((line, i) => expect(line).toBe(expected(i)))
    expect(expected(logs.length - 1).startsWith(logs.at(-1))).toBe(true)
    expect(report.processesLeft).toBe(0)
  })

  it('frames after done other than the next boot-ack keep the result but retire the process', () => {
    const report = forge('frames-after-done')
    expect(report.result).toEqual({ logs: [], value: 7 })
    expect(report.calls).toBe(0)
    expect(report.processesLeft).toBe(0)
  })

  it('frames after a stop are not acted on: no log recorded, no binding called (docs/budgets-and-ledger.md#nothing-passes-the-end)', () => {
    const report = forge('after-stop')
    expect(report.result).toEqual({
      logs: ['before'],
      error: { kind: 'worker-exit', message: 'program exited with code 0 before completing' },
    })
    expect(report.calls).toBe(0)
    expect(report.streamed).toBe(1)
    expect(report.processesLeft).toBe(0)
  })

  it('a process that exits mid-run: worker-exit with its exit status, the logs it sent kept', () => {
    const report = forge('exit')
    expect(report.result).toEqual({
      logs: ['before the exit'],
      error: { kind: 'worker-exit', message: 'isolate process exited (code=3, signal=null) before completing' },
    })
    expect(report.processesLeft).toBe(0)
  })

  it('by default a compromised process never sees another run: each run is served by a fresh process', () => {
    // `implant` looks healthy after each run and would hand back the program of the run before.
    const programs = ['return "the secret of user A"', 'return 2', 'return 3']
    const report = JSON.parse(native.forgeContainedIsolateRuns('implant', MAX_OUTPUT_BYTES, programs, 1))
    expect(report.results.map((r) => r.result)).toEqual(programs.map(() => ({ logs: [], value: 1 })))
    expect(report.processesLeft).toBe(0)
  })

  it('maxRunsPerProcess above 1 gives that up: the compromised process reads the run before', () => {
    const programs = ['return "the secret of user A"', 'return 2']
    const report = JSON.parse(native.forgeContainedIsolateRuns('implant', MAX_OUTPUT_BYTES, programs, 2))
    expect(report.results.map((r) => r.result)).toEqual([
      { logs: [], value: 1 },
      { logs: [], value: 'implant saw: return "the secret of user A"' },
    ])
    expect(report.processesLeft).toBe(0)
  })

  it('a process whose program took it over cannot signal the template that forked it (its own Landlock scope, without seccomp)', async () => {
    // Where Landlock scopes signals (ABI 6 and later), each forked process's own domain keeps it
    // from the template and its siblings even on a kernel that refuses the seccomp allowlist.
    const { runtime, fiber } = await loadIsolate({ containment: 'process' })
    const landlock = runtime.sandbox?.landlock ?? 0
    await fiber.dispose()
    const report = forge('signal-template')
    expect(report.result.value).toBe(1)
    expect(report.result.logs).toEqual([
      landlock >= 6 ? 'kill(template, 0): Operation not permitted (os error 1)' : 'kill(template, 0): allowed',
    ])
    expect(report.processesLeft).toBe(0)
  })

  // The template that forks these processes runs no program, but the host reads its channel as it
  // reads theirs (src/process_tier/host/template.rs): one answer per fork asked, naming the fork's
  // id, its two descriptors and no others, lines of at most 1 KiB, exits only of processes it forked.
  // A template that breaks one is killed with every process it forked; the run fails naming the
  // rule (the pool tries a fresh template first, which here breaks it too), and the host keeps
  // none of what it sent. Before ids, an answer to a fork not asked (one that missed its deadline)
  // was taken as the next fork's, with its descriptors.
  it.each([
    ['template-stale-answer', 'it answered a question the host did not ask'],
    ['template-extra-fds', 'it attached descriptors no answer claims'],
    ['template-flood', 'a line exceeded its size cap'],
    ['template-phantom-exit', 'it reported the exit of a process it did not fork'],
    ['template-garbage', 'a line did not parse'],
    ['template-silent', 'it did not answer a fork within 2 s'],
  ])('a template that breaks its channel (%s) is killed: the run fails naming the rule, nothing is left', (scenario, rule) => {
    const fds = fs.readdirSync('/proc/self/fd').length
    const report = forge(scenario)
    expect(report.result).toEqual({
      logs: [],
      error: {
        kind: 'worker-exit',
        message: `failed to start the isolate's sandbox process: its template broke the channel's rules (${rule}); it was killed`,
      },
    })
    expect(report.calls).toBe(0)
    expect(report.processesLeft).toBe(0)
    expect(sandboxProcesses()).toEqual([])
    expect(fs.readdirSync('/proc/self/fd').length).toBe(fds)
  })

  it('leaves no sandbox process behind, and a real runtime still runs return 1', async () => {
    for (const scenario of ['garbage', 'oversized-frame']) forge(scenario)
    expect(sandboxProcesses()).toEqual([])
    const { runtime, fiber } = await loadIsolate()
    expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({ logs: [], value: 1 })
    await fiber.dispose()
  })
})
