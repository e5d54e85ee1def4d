// The shared session layer (lib/session.mjs) over real native runs: a run ends with the kind the
// layer asks for, and an event handler of the layer that throws fails the run instead of leaving
// it to hang until a budget ends it.
import { describe, expect, it } from 'vitest'
import native from '../lib/native.mjs'
import { renderReason, renderRejection } from '../lib/request.mjs'
import { runSession, sessionState } from '../lib/session.mjs'

const CAP = 1 << 20
const { Logs, Done } = native.RunEventKind
const options = (program) => ({
  program,
  namespaces: [],
  computeMs: 10000,
  maxWallMs: 20000,
  maxOutputBytes: CAP,
  maxOldGenerationSizeMb: 64,
  streamLogs: true,
})

/** A thread-tier isolate backend whose log handler is broken (a glue bug). */
const broken = {
  dialect: 'isolate',
  members: 'live',
  program: String,
  abortMessage: renderReason,
  numberText: undefined,
  messageCap: () => CAP,
  failedBeforeStart: (state, kind, message) => native.isolateFreshFailure(kind, message, CAP),
  startErrorMessage: renderRejection,
  start: (state, plan, session) => {
    const run = native.startIsolateRun(options(plan.program), (kind, id, ns, name, payload) => session.guard(() => {
      if (kind === Logs) throw new TypeError('the log handler broke')
      if (kind === Done) {
        run.join()
        session.settle({ logs: payload.logs, error: payload.error, stats: payload.stats })
      }
    }))
    return run
  },
}

describe('the session layer', () => {
  it('fails a run whose event handler throws as worker-exit, at once', async () => {
    const started = Date.now()
    const result = await runSession(broken, sessionState({}), {
      // Logs are streamed when the program yields.
      program: "console.log('first'); await new Promise((r) => setTimeout(r, 10)); for (;;) {}",
      bindings: [],
      onLog: () => {},
    })
    expect(result).toEqual({
      logs: ['first'],
      error: { kind: 'worker-exit', message: 'code-runtime-native: internal error: the log handler broke' },
    })
    // Not the 10 s compute budget: the broken handler ended it.
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('ends native isolate runs with the kind asked for, on both tiers', async () => {
    const ended = (start) => new Promise((resolve) => {
      const run = start((kind, id, ns, name, payload) => {
        if (kind === Done) resolve({ run, error: payload.error })
      })
      setTimeout(() => run.abort('glue', 'worker-exit'), 100)
    })
    const thread = await ended((onEvent) => native.startIsolateRun(options('for (;;) {}'), onEvent))
    thread.run.join()
    expect(thread.error).toEqual({ kind: 'worker-exit', message: 'glue' })
    if (!native.containedIsolatesAvailable()) return
    const pool = new native.IsolatePool({ maxOldGenerationSizeMb: 64, maxOutputBytes: CAP, maxProcesses: 1, maxRunsPerProcess: 10 })
    const contained = await ended((onEvent) => native.startContainedIsolateRun(pool, options('for (;;) {}'), onEvent))
    expect(contained.error).toEqual({ kind: 'worker-exit', message: 'glue' })
    pool.close()
    contained.run.join(true)
  })
})
