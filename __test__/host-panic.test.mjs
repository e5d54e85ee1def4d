// No panic reaches Node (src/panic): a host process (__test__/panic-host.mjs) is started with the
// suite's panic switch naming one site, so the addon's own code panics there once: a contained
// run's supervisor (holding the lock it shares with Node's main thread), Node's main thread
// reading a contained run's channel (a libuv callback), and a native callback V8 calls on a host
// isolate thread. The run that passed the site ends as `worker-exit` naming it; the host lives
// (it exits 0, not by a signal), and every later run, sequential or concurrent, succeeds.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const HOST = path.join(path.dirname(fileURLToPath(import.meta.url)), 'panic-host.mjs')

function host(site, containment) {
  const child = spawn(process.execPath, [HOST, containment], {
    env: { ...process.env, CODE_RUNTIME_NATIVE_TEST_PANIC: site },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })))
}

const ok = (i) => ({ logs: [`run ${i}`], value: i })

describe.each([
  ['supervisor', 'process', "the isolate's supervisor"],
  ['reader', 'process', "the host's reader of the isolate's channel"],
  ['callback', 'thread', 'a binding call'],
])('a panic at the %s site (%s)', (site, containment, what) => {
  it('ends only the run that passed it; the host lives and serves every later run', async () => {
    const { code, signal, stdout, stderr } = await host(site, containment)
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null })
    const report = JSON.parse(stdout)
    expect(report.containment).toBe(containment)
    expect(report.first.error).toEqual({
      kind: 'worker-exit',
      message: expect.stringMatching(
        new RegExp(`^code-runtime-native: internal error: ${what} failed \\(test panic at the ${site} site \\(CODE_RUNTIME_NATIVE_TEST_PANIC\\)\\); the run was ended\\.`),
      ),
    })
    // The panic was printed where the host's operator sees it.
    expect(stderr).toContain(`test panic at the ${site} site`)
    expect(report.after).toEqual([1, 2, 3, 4, 5].map(ok))
    expect(report.concurrent).toEqual([6, 7, 8, 9].map(ok))
  })
})

// Node's main thread reads a Python run's fd 3 too (src/python/run/shared.rs): a panic there ends
// that run alone. Which run passes the site first is the first one whose frames the main thread
// read (it takes the reading over as the child comes up), so exactly one fails, whichever it is.
describe('a panic at the reader site (python)', () => {
  it('ends only the run that passed it; the host lives and serves every other run', async () => {
    const { code, signal, stdout, stderr } = await host('reader', 'python')
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null })
    const report = JSON.parse(stdout)
    const results = [report.first, ...report.after, ...report.concurrent]
    const failed = results.filter((r) => r.error)
    expect(failed).toEqual([
      {
        logs: [],
        error: {
          kind: 'worker-exit',
          message: expect.stringMatching(
            /^code-runtime-native: internal error: the host's reader of the Python child's channel failed \(test panic at the reader site \(CODE_RUNTIME_NATIVE_TEST_PANIC\)\); the run was ended\./,
          ),
        },
      },
    ])
    results.forEach((r, i) => {
      if (!r.error) expect(r).toEqual({ logs: [`run ${i}`], value: i })
    })
    expect(stderr).toContain('test panic at the reader site')
  })
})

// Events a Python run's own thread reads (its stdout) reach Node's main thread by a `Flush`
// (src/python/run/shared.rs): a panic delivering them ends that run alone, which would otherwise
// wait for events never delivered.
describe('a panic at the flush site (python)', () => {
  it('ends only the run that passed it; the host lives and serves every other run', async () => {
    const { code, signal, stdout, stderr } = await host('flush', 'python-stray')
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null })
    const report = JSON.parse(stdout)
    const results = [report.first, ...report.after, ...report.concurrent]
    // The run's line was recorded (the ledger has it) though its delivery failed.
    const failed = results.flatMap((r, i) => (r.error ? [[i, r]] : []))
    expect(failed).toEqual([
      [
        expect.any(Number),
        {
          logs: [`run ${failed[0]?.[0]}`],
          error: {
            kind: 'worker-exit',
            message: expect.stringMatching(
              /^code-runtime-native: internal error: the host's delivery of the Python child's events failed \(test panic at the flush site \(CODE_RUNTIME_NATIVE_TEST_PANIC\)\); the run was ended\./,
            ),
          },
        },
      ],
    ])
    results.forEach((r, i) => {
      if (!r.error) expect(r).toEqual({ logs: [`run ${i}`], value: i })
    })
    expect(stderr).toContain('test panic at the flush site')
  })
})

// The one site in a sandbox process: a Python template's forked child panics as it starts to
// take its run's layers (src/python/template/child.rs). The panic is caught there and the child exits
// with the code for it (75); each later child is a copy of the same template, so every run
// trips it. The host lives; the template does too: a run that fell back to spawning an
// interpreter (the template gone) would not pass the site and would succeed.
describe('a panic at the python-enter site (a forked Python child)', () => {
  it('ends each forked run as worker-exit with the code a caught panic exits with; the host and the template live', async () => {
    const { code, signal, stdout, stderr } = await host('python-enter', 'python')
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null })
    const report = JSON.parse(stdout)
    for (const result of [report.first, ...report.after, ...report.concurrent]) {
      // A spare child died before its run wrote the boot frame (the write found its channel
      // closed); a child forked for the run may still take it. Either way its own exit says why.
      expect(result.error).toEqual({
        kind: 'worker-exit',
        message: expect.stringMatching(
          /^(failed to boot python subprocess: write EPIPE: python exited \(code=75, signal=null\)|python exited \(code=75, signal=null\) before completing)$/,
        ),
      })
      expect(result).not.toHaveProperty('value')
      // The panic was printed on the child's stderr, which is the run's.
      expect(result.logs).toContain('test panic at the python-enter site (CODE_RUNTIME_NATIVE_TEST_PANIC)')
    }
  })
})

// The other site in the Python template's processes: its serving loop (`crn_template_serve`,
// in the addon) panics as it takes a fork request. The panic is caught there, so the template
// exits as its script says (1) instead of aborting; the host finds the request unanswered and
// spawns that run's interpreter, and the next run's new template (armed as well) does the same.
// Every run succeeds.
describe('a panic at the template-serve site (the Python template)', () => {
  it('ends the template, never the host or a run: each run spawns its own interpreter and succeeds', async () => {
    const { code, signal, stdout, stderr } = await host('template-serve', 'python')
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null })
    const report = JSON.parse(stdout)
    expect([report.first, ...report.after, ...report.concurrent]).toEqual([0, 1, 2, 3, 4].map(ok))
    // Printed on the template's stderr (the host's), and caught: an unwind into Python's C frames
    // would have aborted the template instead.
    expect(stderr).toContain('test panic at the template-serve site (CODE_RUNTIME_NATIVE_TEST_PANIC)')
    expect(stderr).not.toMatch(/cannot unwind|aborting/)
  })
})
