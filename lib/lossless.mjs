// Host-side lossless JSON (docs/seam.md#lossless-json), shared by both backends: validates a value
// a host binding resolved with and writes its compact JSON in one iterative pass, reading each
// property exactly once. Plain containers from another realm (a `vm` context) are accepted when
// their prototypes are that realm's genuine intrinsics, verified with intrinsics captured here at
// load.
import { types } from 'node:util'

const ArrayIsArray = Array.isArray
const ObjectGetPrototypeOf = Object.getPrototypeOf
const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor
const ObjectKeys = Object.keys
const ObjectPrototype = Object.prototype
const ArrayPrototype = Array.prototype
const ReflectOwnKeys = Reflect.ownKeys
const ReflectApply = Reflect.apply
const FunctionPrototypeToString = Function.prototype.toString
const JSONStringify = JSON.stringify
const NumberIsFinite = Number.isFinite
const ObjectIs = Object.is
const SetCtor = Set
const SetPrototypeHas = Set.prototype.has
const SetPrototypeAdd = Set.prototype.add
const SetPrototypeDelete = Set.prototype.delete
const StringCtor = String
const {
  isProxy, isDate, isRegExp, isMap, isSet, isWeakMap, isWeakSet, isPromise, isNativeError,
  isAnyArrayBuffer, isArrayBufferView, isBoxedPrimitive, isGeneratorObject, isMapIterator,
  isSetIterator, isModuleNamespaceObject, isExternal, isArgumentsObject,
} = types

const INVALID = Symbol('invalid')

function hasInternalState(v) {
  return isProxy(v) || isDate(v) || isRegExp(v) || isMap(v) || isSet(v) || isWeakMap(v) ||
    isWeakSet(v) || isPromise(v) || isNativeError(v) || isAnyArrayBuffer(v) || isArrayBufferView(v) ||
    isBoxedPrimitive(v) || isGeneratorObject(v) || isMapIterator(v) || isSetIterator(v) ||
    isModuleNamespaceObject(v) || isExternal(v) || isArgumentsObject(v)
}

/** The own data value of `key`, never running a getter. */
function ownValue(object, key) {
  const descriptor = ObjectGetOwnPropertyDescriptor(object, key)
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined
}

/** Whether `proto` is another realm's genuine intrinsic prototype of the built-in `name`. */
function isForeignIntrinsic(proto, name, expectedParent) {
  if (proto === null || typeof proto !== 'object' || isProxy(proto)) return false
  const ctor = ownValue(proto, 'constructor')
  if (typeof ctor !== 'function' || isProxy(ctor)) return false
  if (ownValue(ctor, 'name') !== name || ownValue(ctor, 'prototype') !== proto) return false
  let source
  try {
    source = ReflectApply(FunctionPrototypeToString, ctor, [])
  } catch {
    return false
  }
  if (source !== `function ${name}() { [native code] }`) return false
  return expectedParent(ObjectGetPrototypeOf(proto))
}

const isForeignObjectPrototype = (proto) =>
  proto !== ObjectPrototype && isForeignIntrinsic(proto, 'Object', (parent) => parent === null)
const isForeignArrayPrototype = (proto) =>
  proto !== ArrayPrototype && isForeignIntrinsic(proto, 'Array', isForeignObjectPrototype)

const NumberIsInteger = Number.isInteger
const MAX_SAFE = Number.MAX_SAFE_INTEGER
const BigIntCtor = BigInt

/**
 * The fd-3 spelling of a number (docs/protocol.md#numbers-on-the-wire): an integral double beyond
 * ±(2^53−1) as its exact digits (`2**60` is `1152921504606846976`), every other number as
 * JavaScript writes it.
 * @param {number} n
 */
export function exactDigits(n) {
  return NumberIsInteger(n) && (n > MAX_SAFE || n < -MAX_SAFE) ? BigIntCtor(n).toString() : StringCtor(n)
}

/**
 * Compact JSON of `value` when it is lossless JSON, otherwise `undefined`.
 * A getter that throws makes the whole value invalid; nothing propagates.
 * @param {unknown} value
 * @param {(n: number) => string} [numberText] how finite numbers are written (default: `String`)
 * @returns {string | undefined}
 */
export function losslessJson(value, numberText = StringCtor) {
  try {
    const out = walk(value, numberText)
    return out === INVALID ? undefined : out
  } catch {
    return undefined
  }
}

function scalar(value, numberText) {
  switch (typeof value) {
    case 'string':
      return JSONStringify(value)
    case 'number':
      if (!NumberIsFinite(value) || ObjectIs(value, -0)) return INVALID
      return numberText(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object':
      return value === null ? 'null' : undefined
    default:
      return INVALID // undefined, function, symbol, bigint
  }
}

function walk(root, numberText) {
  const parts = []
  const path = new SetCtor()
  const stack = [] // frames: { object, keys (or null for arrays), length, next }

  const enter = (value) => {
    const s = scalar(value, numberText)
    if (s !== undefined) {
      if (s === INVALID) return false
      parts[parts.length] = s
      return true
    }
    if (hasInternalState(value) || ReflectApply(SetPrototypeHas, path, [value])) return false
    const proto = ObjectGetPrototypeOf(value)
    if (ArrayIsArray(value)) {
      if (proto !== ArrayPrototype && !isForeignArrayPrototype(proto)) return false
      const length = value.length
      // Own keys are exactly the indices and `length`: no holes, no extra or hidden properties.
      if (ReflectOwnKeys(value).length !== length + 1) return false
      for (let i = 0; i < length; i++) {
        if (ObjectGetOwnPropertyDescriptor(value, i) === undefined) return false
      }
      parts[parts.length] = '['
      stack[stack.length] = { object: value, keys: null, length, next: 0 }
    } else {
      if (proto !== null && proto !== ObjectPrototype && !isForeignObjectPrototype(proto)) return false
      const keys = ObjectKeys(value)
      // Symbol keys or non-enumerable properties would be lost by a JSON copy.
      if (ReflectOwnKeys(value).length !== keys.length) return false
      parts[parts.length] = '{'
      stack[stack.length] = { object: value, keys, length: keys.length, next: 0 }
    }
    ReflectApply(SetPrototypeAdd, path, [value])
    return true
  }

  if (!enter(root)) return INVALID
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]
    if (frame.next === frame.length) {
      parts[parts.length] = frame.keys === null ? ']' : '}'
      stack.length -= 1
      ReflectApply(SetPrototypeDelete, path, [frame.object])
      continue
    }
    const i = frame.next++
    if (i > 0) parts[parts.length] = ','
    let item
    if (frame.keys === null) {
      item = frame.object[i]
      if (frame.object.length !== frame.length) return INVALID
    } else {
      const key = frame.keys[i]
      parts[parts.length] = JSONStringify(key)
      parts[parts.length] = ':'
      item = frame.object[key]
    }
    if (!enter(item)) return INVALID
  }
  return parts.join('')
}
