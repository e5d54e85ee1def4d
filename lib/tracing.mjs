// Traces of runs and binding calls (docs/tracing.md): Node's diagnostics channels, published
// always and free while nobody subscribes, and OpenTelemetry spans when a runtime's config names
// a `tracer`. `@opentelemetry/api` is an optional peer, loaded only then.
import dc from 'node:diagnostics_channel'
import { createRequire } from 'node:module'
import Schema from 'schemastery'
import { PREFIX } from './request.mjs'

/** `start`, `end`, `asyncStart`, `asyncEnd` and `error` around each `run()`. */
export const runChannel = dc.tracingChannel('code-runtime-native:run')
/** The same around each binding call the host's function is invoked for. */
export const bindingChannel = dc.tracingChannel('code-runtime-native:binding')

/** The version of the OpenTelemetry semantic conventions whose names the spans use. */
export const SEMCONV_VERSION = '1.45.0'

const requireHere = createRequire(import.meta.url)

/** The config keys of tracing, in every runtime's schema. */
export const TRACING_SCHEMA = Object.freeze({
  tracer: Schema.any()
    .description('An OpenTelemetry Tracer: a span per run and per binding call, parented on the context of run() (docs/tracing.md).'),
  traceContent: Schema.boolean().default(false)
    .description("Record binding calls' arguments, results and failure messages, and runs' failure messages, on the spans."),
})

/**
 * A runtime's tracing config (`tracer`, `traceContent`), checked at load: `undefined` without a
 * tracer, else the tracer, the API it needs and whether arguments and results are recorded.
 */
export function readTracing(config) {
  const content = config?.traceContent ?? false
  if (typeof content !== 'boolean') {
    throw new Error(`${PREFIX}config.traceContent must be true or false, got ${String(content)}`)
  }
  const tracer = config?.tracer
  if (tracer === undefined || tracer === null) return undefined
  if (typeof tracer !== 'object' || typeof tracer.startSpan !== 'function') {
    throw new Error(`${PREFIX}config.tracer must be an OpenTelemetry Tracer (an object with startSpan), got ${typeof tracer}`)
  }
  let api
  try {
    api = requireHere('@opentelemetry/api')
  } catch (error) {
    throw new Error(
      `${PREFIX}config.tracer needs the package @opentelemetry/api, which could not be loaded (${error?.message}); install it beside code-runtime-native`,
    )
  }
  return Object.freeze({ api, tracer, content })
}

/**
 * The span of one run, parented on the context active when `run()` was called, and the context
 * its binding calls' spans are made in. `undefined` without a tracer.
 */
function startRunSpanNow(tracing, language) {
  if (tracing === undefined) return undefined
  const { api, tracer } = tracing
  const parent = api.context.active()
  const span = tracer.startSpan(
    'code-runtime-native.run',
    { kind: api.SpanKind.INTERNAL, attributes: { 'code_runtime.language': language } },
    parent,
  )
  return { tracing, span, context: api.trace.setSpan(parent, span) }
}

/** Ends a run's span with what the run cost and how it ended (the seam's spelling of a kind). */
function endRunSpanNow(run, stats, error) {
  if (run === undefined) return
  const { span, tracing } = run
  if (stats !== undefined) {
    span.setAttributes(definedOnly({
      'code_runtime.cpu_ms': stats.cpuMs,
      'code_runtime.wall_ms': stats.wallMs,
      'code_runtime.heap_used_bytes': stats.heapUsedBytes,
      'code_runtime.heap_peak_bytes': stats.heapPeakBytes,
      'code_runtime.max_rss_bytes': stats.maxRssBytes,
      'code_runtime.call_count': stats.callCount,
      // Where the program was stopped, in the conventions' `code.*` names.
      'code.line.number': stats.stoppedAt?.line,
      'code.column.number': stats.stoppedAt?.column,
      'code.function.name': stats.stoppedAt?.functionName,
    }))
  }
  if (error !== undefined) {
    span.setAttribute('error.type', error.kind)
    span.setStatus({ code: tracing.api.SpanStatusCode.ERROR, message: tracing.content ? error.message : error.kind })
  }
  span.end()
}

/**
 * The span of one binding call, a child of its run's, named and described by the GenAI
 * conventions' `execute_tool`; `context` is where the host's function is invoked, so the spans
 * the host's tool makes nest under it.
 */
function startCallSpanNow(run, seq, name, argsJson) {
  if (run === undefined) return undefined
  const { api, tracer, content } = run.tracing
  const attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
    'gen_ai.tool.call.id': String(seq),
    'gen_ai.tool.type': 'function',
  }
  if (content) attributes['gen_ai.tool.call.arguments'] = argsJson
  const span = tracer.startSpan(`execute_tool ${name}`, { kind: api.SpanKind.INTERNAL, attributes }, run.context)
  return { span, context: api.trace.setSpan(run.context, span), tracing: run.tracing }
}

/**
 * Ends a call's span: `outcome` as `stats.calls` says it; `json` the reply's value as the program
 * got it, or `failure` (`{ type, message }`: the name of what the host's function threw, and the
 * message the program got); both are recorded only with `traceContent`.
 */
function endCallSpanNow(call, outcome, json, failure) {
  if (call === undefined) return
  const { span, tracing } = call
  span.setAttribute('code_runtime.call.outcome', outcome)
  if (tracing.content && json !== undefined) span.setAttribute('gen_ai.tool.call.result', json)
  if (failure !== undefined) {
    span.setAttribute('error.type', failure.type)
    span.setStatus({ code: tracing.api.SpanStatusCode.ERROR, message: tracing.content ? failure.message : undefined })
  }
  span.end()
}

/**
 * The span functions as the session calls them: a tracer that throws (a bug of the host's) loses
 * its span and never changes a run's result, as an observer never does (docs/seam.md#observers).
 */
export const startRunSpan = quiet(startRunSpanNow)
export const endRunSpan = quiet(endRunSpanNow)
export const startCallSpan = quiet(startCallSpanNow)
export const endCallSpan = quiet(endCallSpanNow)

function quiet(fn) {
  return (...args) => {
    try {
      return fn(...args)
    } catch {
      return undefined
    }
  }
}

/** `fn()` with the call's span as the active context (as is, without a tracer). */
export function withCallContext(call, fn) {
  return call === undefined ? fn() : call.tracing.api.context.with(call.context, fn)
}

function definedOnly(attributes) {
  for (const key of Object.keys(attributes)) if (attributes[key] === undefined) delete attributes[key]
  return attributes
}
