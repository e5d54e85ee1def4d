  // 02-access.js: a fragment of the body of the one function the files of parts.txt join into, in
  // its order (README.md): getter-free property access, ToPrimitive / ToString without mutable
  // built-ins.

  // =========================================================================
  // 2. Safe object access
  // =========================================================================

  function isObjectLike(v) {
    return (typeof v === 'object' && v !== null) || typeof v === 'function';
  }

  // Replace a Proxy by its target (repeatedly). Returns null if revoked.
  function unwrapProxy(o) {
    while (nTypeTag(o) === T_PROXY) {
      o = nProxyTarget(o);
      if (o === null) return null;
    }
    return o;
  }

  // [[GetPrototypeOf]] of a non-Proxy object; a Proxy found in the chain is
  // replaced by its target so no trap ever runs.
  function protoOf(o) {
    const p = ObjectGetPrototypeOf(o);
    if (p === null || p === ObjectPrototype || p === FunctionPrototype ||
        p === ArrayPrototype || p === ErrorPrototype) {
      return p;
    }
    return unwrapProxy(p);
  }

  function isDataDescriptor(d) {
    return ObjectPrototypeHasOwnProperty(d, 'value');
  }

  // Property lookup along the prototype chain without running program code:
  // data properties give their value, accessors give undefined, except the
  // two side-effect-free native Symbol.toStringTag getters of
  // %TypedArray%.prototype and Iterator.prototype, whose captured originals
  // are called (even if the program replaced them).
  function lookupData(obj, key) {
    let o = obj;
    do {
      const d = ObjectGetOwnPropertyDescriptor(o, key);
      if (d !== undefined) {
        if (isDataDescriptor(d)) return d.value;
        if (key === SymbolToStringTag) {
          if (o === TypedArrayPrototype) return ReflectApply(TypedArrayToStringTagGetter, obj, []);
          if (IteratorCtor !== undefined && o === IteratorPrototype &&
              IteratorToStringTagGetter !== undefined) {
            return ReflectApply(IteratorToStringTagGetter, obj, []);
          }
        }
        return undefined;
      }
      o = protoOf(o);
    } while (o !== null);
    return undefined;
  }

  // `key in obj`, except that an inherited accessor counts as absent.
  function hasDataOrOwn(obj, key) {
    if (ObjectPrototypeHasOwnProperty(obj, key)) return true;
    let o = protoOf(obj);
    while (o !== null) {
      const d = ObjectGetOwnPropertyDescriptor(o, key);
      if (d !== undefined) return isDataDescriptor(d);
      o = protoOf(o);
    }
    return false;
  }

  // A [[Get]] that invokes accessors. Only used for `error.stack`, matching
  // Node, see the header comment. An accessor the program put on
  // Object.prototype is not invoked.
  function getWithAccessors(obj, key) {
    let o = obj;
    do {
      const d = ObjectGetOwnPropertyDescriptor(o, key);
      if (d !== undefined) {
        if (isDataDescriptor(d)) return d.value;
        const g = d.get;
        return g === undefined || o === ObjectPrototype ? undefined : ReflectApply(g, obj, []);
      }
      o = protoOf(o);
    } while (o !== null);
    return undefined;
  }

  // OrdinaryHasInstance(C, object) without Symbol.hasInstance dispatch or
  // traps. `at` is the prototype-chain member on which C was found.
  // Node's isInstanceof (lib/internal/util/inspect.js), as of 20.x-26.x; differs: walks the prototype chain: no Symbol.hasInstance, no Proxy traps
  function isInstanceof(object, C, at) {
    if (nTypeTag(C) === T_PROXY) return false;
    const P = lookupData(C, 'prototype');
    if (!isObjectLike(P)) return false;
    if (P === at && at !== object) return true;
    let o = protoOf(object);
    while (o !== null) {
      if (o === P) return true;
      o = protoOf(o);
    }
    return false;
  }

  function functionName(fn) {
    return lookupData(fn, 'name');
  }

  // A constructor's `name` for getConstructorName. Node reads C.name, which
  // may be a program-defined static getter; we do not call it and use the
  // name V8 records for the instance's constructor instead.
  function constructorFunctionName(C, instance) {
    let o = C;
    do {
      const d = ObjectGetOwnPropertyDescriptor(o, 'name');
      if (d !== undefined) {
        return isDataDescriptor(d) ? d.value : nConstructorName(instance);
      }
      o = protoOf(o);
    } while (o !== null);
    return undefined;
  }

  // ---- ToPrimitive / ToString without trusting mutable built-ins ----
  //
  // Node converts some program values with String(), template literals,
  // Number(), parseInt() or parseFloat(). Those consult Symbol.toPrimitive,
  // valueOf and toString through the prototype chain. We do the same lookup
  // without invoking getters; a method the program defined (on the value or
  // on one of its own classes) is called, as in Node; a method found on a
  // built-in prototype is treated as the original built-in even if the
  // program replaced it, so replacing Object.prototype.toString & co. does
  // not change our output.
  let intrinsicProtos;
  function isIntrinsicProto(o) {
    if (intrinsicProtos === undefined) {
      intrinsicProtos = new SetCtor();
      const list = [ObjectPrototype, FunctionPrototype, ArrayPrototype, StringPrototype,
        NumberPrototype, BooleanPrototype, SymbolPrototype, BigIntPrototype, DatePrototype,
        RegExpPrototype, ErrorPrototype];
      for (let i = 0; i < list.length; i++) SetPrototypeAdd(intrinsicProtos, list[i]);
    }
    return SetPrototypeHas(intrinsicProtos, o);
  }

  let foundOwner = null;
  function findProperty(obj, key) {
    let o = obj;
    do {
      const d = ObjectGetOwnPropertyDescriptor(o, key);
      if (d !== undefined) {
        foundOwner = o;
        return d;
      }
      o = protoOf(o);
    } while (o !== null);
    foundOwner = null;
    return undefined;
  }

  const NOT_PRIMITIVE = {};
  let joinStack;

  // The original built-in `owner[name]` applied to `v`.
  function builtinMethod(owner, name, v) {
    if (name === 'valueOf') {
      if (owner === NumberPrototype) return NumberPrototypeValueOf(v);
      if (owner === StringPrototype) return StringPrototypeValueOf(v);
      if (owner === BooleanPrototype) return BooleanPrototypeValueOf(v);
      if (owner === BigIntPrototype) return BigIntPrototypeValueOf(v);
      if (owner === SymbolPrototype) return SymbolPrototypeValueOf(v);
      if (owner === DatePrototype) return DatePrototypeGetTime(v);
      return NOT_PRIMITIVE;
    }
    // toString
    if (owner === ObjectPrototype) return objectPrototypeToString(v);
    if (owner === FunctionPrototype) return FunctionPrototypeToString(v);
    if (owner === ArrayPrototype) return arrayToString(v);
    if (owner === ErrorPrototype) return errorToString(v);
    if (owner === DatePrototype) return DatePrototypeToString(v);
    if (owner === RegExpPrototype) return regExpToString(v);
    if (owner === NumberPrototype) return NumberPrototypeToString(v);
    if (owner === StringPrototype) return StringPrototypeValueOf(v);
    if (owner === BooleanPrototype) return BooleanPrototypeToString(v);
    if (owner === BigIntPrototype) return BigIntPrototypeToString(v);
    if (owner === SymbolPrototype) return SymbolPrototypeToString(v);
    return NOT_PRIMITIVE;
  }

  function objectPrototypeToString(v) {
    let builtinTag = 'Object';
    switch (nTypeTag(v)) {
      case T_ARRAY: builtinTag = 'Array'; break;
      case T_ARGUMENTS: builtinTag = 'Arguments'; break;
      case T_FUNCTION: case T_ASYNC_FUNCTION: case T_GENERATOR_FUNCTION:
      case T_ASYNC_GENERATOR_FUNCTION: builtinTag = 'Function'; break;
      case T_ERROR: builtinTag = 'Error'; break;
      case T_BOOLEAN_OBJECT: builtinTag = 'Boolean'; break;
      case T_NUMBER_OBJECT: builtinTag = 'Number'; break;
      case T_STRING_OBJECT: builtinTag = 'String'; break;
      case T_DATE: builtinTag = 'Date'; break;
      case T_REGEXP: builtinTag = 'RegExp'; break;
      default: break;
    }
    const tag = lookupData(v, SymbolToStringTag);
    return `[object ${typeof tag === 'string' ? tag : builtinTag}]`;
  }

  // Array.prototype.toString = join(','), with V8's cycle detection.
  function arrayToString(v) {
    if (joinStack === undefined) joinStack = newList();
    if (listIncludes(joinStack, v)) return '';
    push(joinStack, v);
    try {
      const len = lookupData(v, 'length');
      let out = '';
      for (let i = 0; i < len; i++) {
        if (i !== 0) out += ',';
        const e = elementValue(v, i);
        if (e !== undefined && e !== null) out += safeToString(e);
      }
      return out;
    } finally {
      joinStack.length--;
    }
  }

  function safeToPrimitive(v, hint) {
    const target = unwrapProxy(v);
    if (target === null) throw new TypeErrorCtor('Cannot convert object to primitive value');
    v = target;
    const exotic = findProperty(v, SymbolToPrimitive);
    if (exotic !== undefined && isDataDescriptor(exotic) && typeof exotic.value === 'function') {
      const owner = foundOwner;
      if (!isIntrinsicProto(owner)) {
        const r = ReflectApply(exotic.value, v, [hint]);
        if (!isObjectLike(r)) return r;
        throw new TypeErrorCtor('Cannot convert object to primitive value');
      }
      if (owner === SymbolPrototype) return SymbolPrototypeValueOf(v);
      if (owner === DatePrototype && hint === 'default') hint = 'string';
    }
    const first = hint === 'string' ? 'toString' : 'valueOf';
    const second = hint === 'string' ? 'valueOf' : 'toString';
    for (let k = 0; k < 2; k++) {
      const name = k === 0 ? first : second;
      const d = findProperty(v, name);
      if (d === undefined || !isDataDescriptor(d) || typeof d.value !== 'function') continue;
      const owner = foundOwner;
      let r;
      if (isIntrinsicProto(owner)) {
        r = builtinMethod(owner, name, v);
        if (r === NOT_PRIMITIVE) continue;
      } else {
        r = ReflectApply(d.value, v, []);
      }
      if (!isObjectLike(r)) return r;
    }
    throw new TypeErrorCtor('Cannot convert object to primitive value');
  }

  // ToString(v) (throws for symbols, like a template literal).
  function safeToString(v) {
    if (isObjectLike(v)) v = safeToPrimitive(v, 'string');
    if (typeof v === 'symbol') throw new TypeErrorCtor('Cannot convert a Symbol value to a string');
    return `${v}`;
  }

  // String(v): like ToString, but a symbol gives its description.
  function toStr(v) {
    if (isObjectLike(v)) v = safeToPrimitive(v, 'string');
    return StringCtor(v);
  }

  // Number(v) for a non-symbol, non-bigint argument.
  function safeToNumber(v) {
    if (isObjectLike(v)) v = safeToPrimitive(v, 'number');
    return NumberCtor(v);
  }

  function isErrorValue(v) {
    if (!isObjectLike(v)) return false;
    v = unwrapProxy(v);
    if (v === null) return false;
    if (nTypeTag(v) === T_ERROR) return true;
    let o = protoOf(v);
    while (o !== null) {
      if (o === ErrorPrototype) return true;
      o = protoOf(o);
    }
    return false;
  }

  // Node's builtInObjects: the capitalised globals present when Node 20
  // loads util.inspect (22 adds Atomics, 24 Iterator, 26 Float16Array).
  const BUILTIN_NAMES = 'AggregateError Array ArrayBuffer BigInt BigInt64Array ' +
    'BigUint64Array Boolean DataView Date Error EvalError FinalizationRegistry ' +
    'Float32Array Float64Array Function Infinity Int16Array Int32Array Int8Array ' +
    'Intl JSON Map Math NaN Number Object Promise Proxy RangeError ReferenceError ' +
    'Reflect RegExp Set String Symbol SyntaxError TypeError URIError Uint16Array ' +
    'Uint32Array Uint8Array Uint8ClampedArray WeakMap WeakRef WeakSet';
  let builtInObjects;
  function isBuiltinName(name) {
    if (typeof name !== 'string') return false;
    if (builtInObjects === undefined) {
      builtInObjects = ObjectCreate(null);
      let start = 0;
      for (;;) {
        const end = StringPrototypeIndexOf(BUILTIN_NAMES, ' ', start);
        const word = StringPrototypeSlice(BUILTIN_NAMES, start, end === -1 ? undefined : end);
        builtInObjects[word] = true;
        if (end === -1) break;
        start = end + 1;
      }
    }
    if (builtInObjects[name] === true) return true;
    // Globals that later Nodes have when util.inspect loads.
    return (name === 'Atomics' && nodeMajor >= 22) || (name === 'Iterator' && nodeMajor >= 24) ||
      (name === 'Float16Array' && nodeMajor >= 26);
  }

