// The runtime a framework adapter runs programs on: a `ctx.ptcRuntime` the caller already has
// (borrowed, never disposed here), or an IsolatePtcRuntime the adapter starts in a cordis context
// of its own (owned, disposed with the adapter). Every run goes through the seam's public
// `run(resolve(request))`, so an adapter adds no execution path of its own: the per-run deadline
// is the seam's `timeoutMs`, an abort its `signal`.
import { Context } from 'cordis'
import { IsolatePtcRuntime } from '../ptc/index.mjs'
import { PREFIX } from '../request.mjs'

export class AdapterRuntime {
  /**
   * @param {{ runtime?: object, config?: object }} options `runtime`: a `ctx.ptcRuntime` whose
   *   `language` is `languages[i]`; otherwise `config` starts an owned IsolatePtcRuntime now
   * @param {string} adapter the adapter's name, for messages
   * @param {string[]} languages the program languages the framework writes
   */
  constructor(options, adapter, languages = ['typescript']) {
    const runtime = options?.runtime
    if (runtime !== undefined && runtime !== null) {
      this.runtime = checkBorrowed(runtime, adapter, languages)
      this.fiber = undefined
      this.ready = Promise.resolve(this.runtime)
    } else {
      const ctx = new Context()
      this.fiber = ctx.plugin(IsolatePtcRuntime, options?.config ?? {})
      this.ready = Promise.resolve(this.fiber).then(() => ctx.ptcRuntime)
      // An invalid config rejects here; the first run reports it, and no rejection goes unhandled.
      this.ready.catch(() => {})
    }
    this.disposed = false
  }

  /** The runtime's language once it is loaded (`'typescript'` or `'python'`). */
  async language() {
    return (await this.ready).language
  }

  /**
   * Runs one program. Resolves with the seam's result (`{ logs, value? , error? }`); rejects only
   * on misuse (a disposed adapter, an invalid config or request).
   * @param {{ program: string, bindings: object[], signal?: AbortSignal, timeoutMs?: number }} request
   */
  async run(request) {
    const runtime = await this.#runtime()
    return runtime.run(runtime.resolve(seamRequest(request)))
  }

  /**
   * Whether the runtime runs programs durably (`runDurable`): an owned one does, a borrowed one
   * (a host's own `ctx.ptcRuntime`) when it has `runDurable()`.
   */
  get durable() {
    return this.fiber !== undefined || typeof this.runtime.runDurable === 'function'
  }

  /**
   * Runs one attempt of a durable program (docs/durable.md): `run()`'s result plus `journal`,
   * or `suspended` where a binding threw `suspend(data)`; `journal` resumes a paused one.
   */
  async runDurable(request, journal) {
    const runtime = await this.#runtime()
    return runtime.runDurable(runtime.resolve(seamRequest(request)), journal)
  }

  async #runtime() {
    if (this.disposed) throw new Error(`${PREFIX}this adapter was disposed; create a new one to run programs`)
    return this.ready
  }

  /** Ends the owned runtime (its runs end as `abort`); a borrowed one is left to its owner. */
  async dispose() {
    if (this.disposed) return
    this.disposed = true
    if (this.fiber !== undefined) {
      await this.ready.catch(() => {})
      await this.fiber.dispose()
    }
  }
}

/** The seam's request: the program, its bindings, and the deadline and signal when given. */
function seamRequest({ program, bindings, signal, timeoutMs }) {
  const request = { program, bindings }
  if (signal !== undefined) request.signal = signal
  if (timeoutMs !== undefined) request.timeoutMs = timeoutMs
  return request
}

function checkBorrowed(runtime, adapter, languages) {
  if (typeof runtime.resolve !== 'function' || typeof runtime.run !== 'function') {
    throw new TypeError(
      `${PREFIX}${adapter}: options.runtime must be a ctx.ptcRuntime (an object with resolve() and run()); ` +
        'pass the service itself, or leave runtime out to let the adapter start its own',
    )
  }
  if (!languages.includes(runtime.language)) {
    throw new TypeError(
      `${PREFIX}${adapter}: the framework writes ${languages.join(' or ')} programs, but options.runtime runs ` +
        `${String(runtime.language)}; pass an IsolatePtcRuntime`,
    )
  }
  return runtime
}
