// What the frameworks' executors give a program that the runtime's namespaces do not: flat global
// functions (`external_<id>(input)`), namespaces whose tools take several arguments, console
// levels as prefixes, and failed tool calls as Errors carrying the tool error's name. All of it
// is built from one hidden namespace (`__codeRuntimeBridge`, one member per tool) and a prelude
// the adapter puts on the program's first line, before its first character, so every line
// number stays the program's own (failure.mjs moves line-1 columns back).
//
// A tool call never rejects across the runtime's bridge: the host resolves an envelope
// (`{ ok, value? }` or `{ ok: false, message, name? }`) and the prelude turns a failure into an
// Error the program can catch, so the error's name survives the crossing.
import { isSuspension } from '../durable.mjs'
import { losslessJson } from '../lossless.mjs'
import { CALL_NAMES, UNRENDERABLE } from '../request.mjs'

/** The global the hidden namespace is injected under; no tool or namespace may take it. */
export const BRIDGE_GLOBAL = '__codeRuntimeBridge'

/**
 * @typedef {{ name: string, label: string, call: (args: unknown[]) => unknown }} Tool
 *   `name`: what the program calls it by; `label`: how messages name it; `call` gets the
 *   program's arguments (trailing `undefined`s dropped) and returns or resolves the tool's value
 * @typedef {object} Plan
 * @property {Tool[]} [globals] flat global functions, defined on `globalThis`
 * @property {{ name: string, tools: Tool[], missing: string }[]} [namespaces] objects on
 *   `globalThis` whose members are tools; calling a tool one lacks rejects with `missing`
 *   (`{name}` replaced by the name called)
 * @property {[string, string][]} [levels] console methods and the prefix of their entries
 * @property {boolean} [errorNames] a failed call's Error takes the name the tool's error had
 */

/**
 * The prelude (one line, ending in `;`) and the hidden namespace for `plan`.
 * @param {Plan} plan
 * @returns {{ prelude: string, binding: { global: string, functions: Record<string, (args: unknown) => Promise<object>> } }}
 */
export function buildBridge(plan) {
  const functions = Object.create(null)
  // Each member's calls are named after the framework's tool in stats.calls and traces.
  const callNames = Object.create(null)
  let next = 0
  const member = (tool, namespace) => {
    const key = `t${next++}`
    functions[key] = hostFunction(tool)
    callNames[key] = namespace === undefined ? tool.label : `${namespace}.${tool.label}`
    return key
  }
  const globals = (plan.globals ?? []).map((tool) => [tool.name, member(tool)])
  const namespaces = (plan.namespaces ?? []).map(({ name, tools, missing }) => ({
    name,
    members: tools.map((tool) => [tool.name, member(tool, name)]),
    missing,
  }))
  const binding = { global: BRIDGE_GLOBAL, functions, [CALL_NAMES]: Object.freeze(callNames) }
  return { prelude: prelude(globals, namespaces, plan.levels ?? [], plan.errorNames === true), binding }
}

/** A tool as a member of the hidden namespace: it resolves an envelope, and rejects only to pause a durable run. */
function hostFunction(tool) {
  return async (args) => {
    let value
    try {
      value = await tool.call(Array.isArray(args) ? args : [args])
    } catch (error) {
      // A durable run's pause (lib/durable.mjs) is the runtime's to see, not the program's.
      if (isSuspension(error)) throw error
      return { ok: false, ...thrownShape(error) }
    }
    if (value === undefined) return { ok: true }
    if (losslessJson(value) === undefined) {
      return {
        ok: false,
        message:
          `tool ${JSON.stringify(tool.label)} returned a value JSON cannot carry exactly (undefined inside, a function, ` +
          'a Date, NaN, a class instance, a cycle, ...): make the tool return plain JSON data',
      }
    }
    return { ok: true, value }
  }
}

/** `{ message, name? }` of anything a tool threw, never throwing itself. */
function thrownShape(error) {
  let message
  try {
    const own = error !== null && typeof error === 'object' ? error.message : undefined
    message = typeof own === 'string' ? own : String(error)
  } catch {
    message = UNRENDERABLE
  }
  let name
  try {
    if (error !== null && typeof error === 'object' && typeof error.name === 'string') name = error.name
  } catch {}
  return name === undefined ? { message } : { message, name }
}

/**
 * The program-side text. It runs before the program, captures the intrinsics it uses before the
 * program can touch them, and defines the flat functions and the namespaces as properties of
 * `globalThis` (defined, not assigned, so a name like `__proto__` is an ordinary property), so it
 * declares nothing in the program's own scope.
 */
function prelude(globals, namespaces, levels, errorNames) {
  const q = JSON.stringify
  const spaces = namespaces.map(({ name, members, missing }) => [name, members, missing])
  return [
    '((b,O,E,P,M,g)=>{',
    'const d=O.defineProperty,h=O.hasOwn;',
    'const a=(x)=>{let n=x.length;while(n>0&&x[n-1]===undefined)n--;return x.slice(0,n)};',
    'const r=(x)=>{if(x.ok)return x.value;const e=new E(x.message);',
    errorNames ? "if(typeof x.name==='string')d(e,'name',{value:x.name,writable:true,configurable:true});" : '',
    'throw e};',
    'const f=(m)=>(...x)=>b[m](a(x)).then(r);',
    'const v=(k,value)=>d(g,k,{value,writable:true,enumerable:true,configurable:true});',
    `for(const[k,p]of ${q(levels)}){const c=g.console,w=c[k];`,
    "if(typeof w==='function')c[k]=(...x)=>x.length===0?w.call(c,p):typeof x[0]==='string'?w.call(c,p+x[0],...x.slice(1)):w.call(c,p.trimEnd(),...x)}",
    `for(const[k,m]of ${q(globals)})v(k,f(m));`,
    `for(const[k,t,miss]of ${q(spaces)}){const l=new M(t);`,
    "v(k,new P({},{get:(o,n)=>{if(h(o,n))return o[n];if(typeof n!=='string')return undefined;",
    "const m=l.get(n);if(m!==undefined)return f(m);if(n==='then')return undefined;",
    "return async()=>{throw new E(miss.replace('{name}',()=>n))}}}))}",
    `})(${BRIDGE_GLOBAL},Object,Error,Proxy,Map,globalThis);`,
  ].join('')
}
