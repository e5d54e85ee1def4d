// Host-side lossless JSON for binding resolutions (spec seam.md §5): one iterative walk that
// validates a host value and encodes it for fd 3 (python-runtime.md §8.1: an integral double beyond
// ±(2^53−1) is written as its exact digits). Backend-agnostic; the Python backend uses it for replies.

const { getPrototypeOf, getOwnPropertyDescriptor, prototype: ObjectPrototype } = Object
const { ownKeys, apply } = Reflect
const isArray = Array.isArray
const ArrayPrototype = Array.prototype
const fnToString = Function.prototype.toString
const hasOwn = Object.prototype.hasOwnProperty
const stringify = JSON.stringify
const { isFinite, isInteger, MAX_SAFE_INTEGER } = Number
const is = Object.is
const toBigInt = BigInt

/** A genuine intrinsic `Array.prototype`/`Object.prototype` of another realm (a `vm` context),
 * verified with intrinsics captured here, so a foreign realm's patches cannot vouch for it. */
function isGenuinePrototype(proto, name) {
  try {
    if (proto === null || (typeof proto !== 'object' && typeof proto !== 'function')) return false
    const ctor = getOwnPropertyDescriptor(proto, 'constructor')?.value
    if (typeof ctor !== 'function') return false
    if (getOwnPropertyDescriptor(ctor, 'name')?.value !== name) return false
    if (getOwnPropertyDescriptor(ctor, 'prototype')?.value !== proto) return false
    if (apply(fnToString, ctor, []) !== `function ${name}() { [native code] }`) return false
    const parent = getPrototypeOf(proto)
    if (name === 'Object') return parent === null
    return parent === ObjectPrototype || isGenuinePrototype(parent, 'Object')
  } catch {
    return false
  }
}

/** The wire spelling of a finite, non-negative-zero number. */
export function numberText(n) {
  return isInteger(n) && (n > MAX_SAFE_INTEGER || n < -MAX_SAFE_INTEGER) ? toBigInt(n).toString() : `${n}`
}

/**
 * Validates `root` as lossless JSON and returns its compact JSON text, or `undefined` when it is
 * not lossless (including when a getter throws). Never throws. Each property is read once.
 */
export function encodeLossless(root) {
  try {
    return walk(root)
  } catch {
    return undefined
  }
}

function walk(root) {
  const out = []
  const path = new Set()
  const stack = []
  let v = root
  for (;;) {
    switch (typeof v) {
      case 'string':
        out.push(stringify(v))
        break
      case 'number':
        if (!isFinite(v) || is(v, -0)) return undefined
        out.push(numberText(v))
        break
      case 'boolean':
        out.push(v ? 'true' : 'false')
        break
      case 'object': {
        if (v === null) {
          out.push('null')
          break
        }
        if (path.has(v)) return undefined
        const proto = getPrototypeOf(v)
        if (isArray(v)) {
          if (proto !== ArrayPrototype && !isGenuinePrototype(proto, 'Array')) return undefined
          const len = v.length
          // Only the indices and `length`: no holes, no extra properties of any kind.
          if (ownKeys(v).length !== len + 1) return undefined
          path.add(v)
          stack.push({ obj: v, arr: true, len, i: 0 })
          out.push('[')
        } else {
          if (proto !== null && proto !== ObjectPrototype && !isGenuinePrototype(proto, 'Object')) return undefined
          const keys = ownKeys(v)
          for (const k of keys) {
            if (typeof k !== 'string' || !getOwnPropertyDescriptor(v, k)?.enumerable) return undefined
          }
          path.add(v)
          stack.push({ obj: v, arr: false, keys, i: 0 })
          out.push('{')
        }
        break
      }
      default:
        return undefined // undefined, functions, symbols, bigints
    }
    for (;;) {
      const top = stack[stack.length - 1]
      if (top === undefined) return out.join('')
      if (top.arr) {
        if (top.i === top.len) {
          stack.pop()
          path.delete(top.obj)
          out.push(']')
          continue
        }
        if (top.i > 0) out.push(',')
        // A getter that shortened the array invalidates it.
        if (top.obj.length !== top.len || !apply(hasOwn, top.obj, [top.i])) return undefined
        v = top.obj[top.i++]
        break
      }
      if (top.i === top.keys.length) {
        stack.pop()
        path.delete(top.obj)
        out.push('}')
        continue
      }
      if (top.i > 0) out.push(',')
      const key = top.keys[top.i++]
      out.push(stringify(key), ':')
      v = top.obj[key]
      break
    }
  }
}
