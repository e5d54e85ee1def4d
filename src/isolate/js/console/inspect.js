// code-runtime-native: console formatting inside the program's V8 isolate.
//
// A from-scratch implementation of the observable behaviour of Node's
// `util.inspect` / `util.formatWithOptions` and of the `Console` methods, for a
// bare V8 context that has no Node. The parity targets are Node v20.20.2,
// v22.23.5, v24.22.3 and v26.12.1, one at a time (setNodeMajor; the
// differences are listed in src/isolate/js/console/README.md, "Node majors"), with a
// console constructed as
//
//   new Console({ stdout, stderr, colorMode: false,
//                 inspectOptions: { depth: 4, maxArrayLength: 100,
//                                   maxStringLength: 10000, breakLength: 80 } })
//
// so `log` is `util.formatWithOptions(thoseOptions, ...args)` and every other
// method (dir, table, trace, ...) formats exactly as that Console does.
//
// ---------------------------------------------------------------------------
// Shape and lifetime
// ---------------------------------------------------------------------------
// This file is ONE function expression. The runtime compiles it once per
// isolate, before the program runs, and calls it with the `natives` object:
//
//   const api = (function (natives) { ... })(natives);
//   api.formatLog(args)          -> string   one console.log entry
//   api.formatWithOptions(opts, args) -> string
//   api.inspect(value, opts?)    -> string   util.inspect with our defaults
//   api.createConsole(emit, onWarning?) -> console object (null prototype)
//   api.defineCustomInspect(prototype, fn)  runtime classes (URL, ...) only
//   api.setNodeMajor(major)      -> major followed (20, 22, 24 or 26; other
//                                   values: 24, the newest LTS). Per run.
//
// `formatLog` and the console methods are the hot path; `inspect` and
// `formatWithOptions` take Node's option names (depth, showHidden, colors,
// maxArrayLength, maxStringLength, breakLength, compact, sorted, getters,
// numericSeparator, showProxy; `customInspect` and `stylize` are ignored).
// `createConsole` returns log info debug dirxml warn error dir time timeEnd
// timeLog trace assert clear count countReset group groupCollapsed groupEnd
// table, each a bound function (works unbound, hides its source) that calls
// `emit(entry)` once per chunk Node would write (entries carry no trailing
// newline; group indentation is applied). `onWarning(message)` receives the
// text of Node's process warnings (unknown time/count labels), which are not
// console output; by default they are dropped.
//
// ---------------------------------------------------------------------------
// Captured state (primordials)
// ---------------------------------------------------------------------------
// Everything this code uses from the language is captured when the function
// body runs (section 1 below): Function.prototype.call/bind (uncurried with
// bind.bind(call)), Reflect.apply/ownKeys, the Object statics we use,
// Object.prototype.hasOwnProperty/propertyIsEnumerable, the Array, String,
// Number, Boolean, BigInt, Symbol, Date, RegExp (exec, source and flag
// getters), Map/Set (size getters, entries/values, iterator `next`),
// %TypedArray% / ArrayBuffer / DataView getters, JSON.stringify, Math, Error,
// TypeError, the intrinsic prototypes and well-known symbols, and the
// natives. Afterwards the program may replace or delete any global,
// prototype method, getter, iterator `next`, `Function.prototype.call`, add
// getters/setters to Object.prototype/Array.prototype, ... and the output
// does not change (the mutation pass of the test suite checks this):
//  * only captured functions are called, through captured call/apply;
//  * no for-of, spread, destructuring of arrays, `instanceof`, `in`, or
//    String.prototype.replace/split/match (they consult mutable protocols);
//  * property reads go through getOwnPropertyDescriptor along the prototype
//    chain (`lookupData`): data values only, accessors are never invoked,
//    a Proxy met in a prototype chain is replaced by its target;
//  * every array we write into is a `List` (an Array subclass whose
//    prototype chain is null), so element stores never reach a setter;
//    objects we create and read back have all their fields from creation;
//  * ToString/ToPrimitive of program values (where Node does them) are
//    emulated: a method found on one of the built-in prototypes counts as the
//    original built-in even if the program replaced it; a method the program
//    defined on the value or its own classes is called, as in Node.
// State kept between calls: lazily built constant tables, the custom-inspect
// registry (runtime only) and, per console, the group indent and the
// count/time maps. Formatting is re-entrant (program code run by `%s` may log).
//
// ---------------------------------------------------------------------------
// The natives interface (implemented in Rust with the v8 crate; in tests by
// __test__/console-natives.cjs from Node internals)
// ---------------------------------------------------------------------------
// All functions are called with `this === undefined`. None of them may run
// JavaScript (no getters, no Proxy traps, no user callbacks, no
// Error.prepareStackTrace). Arrays they return must be ordinary arrays of the
// isolate's realm created with their elements (v8::Array::new_with_elements);
// we only read them.
//
//   typeTag(value) -> integer
//       `value` is an object or a function (never a primitive). Returns the
//       first matching tag, checked in this order:
//         1  Proxy                (Value::is_proxy)
//         2  Array                (is_array)
//         4  async function, not a generator  (is_async_function && !is_generator_function)
//         5  generator function, not async    (is_generator_function && !is_async_function)
//         6  async generator function         (is_async_function && is_generator_function)
//         3  any other function   (is_function; includes bound functions and classes)
//         7  native error         (is_native_error)
//         8  Date                 (is_date)
//         9  RegExp               (is_reg_exp)
//        10  Map                  (is_map)
//        11  Set                  (is_set)
//        12  WeakMap              (is_weak_map)
//        13  WeakSet              (is_weak_set)
//        14  Map iterator         (is_map_iterator)
//        15  Set iterator         (is_set_iterator)
//        16  Promise              (is_promise)
//        17  ArrayBuffer          (is_array_buffer)
//        18  SharedArrayBuffer    (is_shared_array_buffer)
//        19  DataView             (is_data_view)
//        20  any typed array      (is_typed_array; every element type, Float16 too)
//        21  Number object        (is_number_object)
//        22  String object        (is_string_object)
//        23  Boolean object       (is_boolean_object)
//        24  BigInt object        (is_big_int_object)
//        25  Symbol object        (is_symbol_object)
//        26  arguments object     (is_arguments_object)
//        27  module namespace     (is_module_namespace_object)
//         0  anything else (ordinary objects, generator objects, ...)
//
//   proxyTarget(proxy) -> object | null
//       Proxy::get_target; null when the proxy is revoked. May itself be a Proxy.
//
//   proxyHandler(proxy) -> object | null
//       Proxy::get_handler; null when revoked. (Only used by `%o`/showProxy.)
//
//   promiseState(promise) -> [state, result]
//       state: 0 pending, 1 fulfilled, 2 rejected (Promise::state);
//       result: Promise::result, undefined while pending.
//
//   previewEntries(value) -> [entries, isKeyValue]
//       Object::preview_entries for a Map iterator, Set iterator, WeakMap or
//       WeakSet: `entries` is the flat array it returns ([k0, v0, k1, v1, ...]
//       when isKeyValue), isKeyValue its boolean. Does not advance iterators.
//
//   ownNonIndexKeys(object, onlyEnumerable) -> array of string|symbol
//       Object::get_property_names with mode KeyCollectionMode::OwnOnly,
//       property_filter ONLY_ENUMERABLE (onlyEnumerable) or ALL_PROPERTIES,
//       index_filter IndexFilter::SkipIndices, key_conversion
//       KeyConversionMode::ConvertToString: own string keys then own symbols,
//       in [[OwnPropertyKeys]] order, without array indices. Used for arrays
//       and typed arrays.
//
//   constructorName(object) -> string
//       Object::get_constructor_name (V8's class/constructor name lookup,
//       which reads data properties only). Used for objects whose prototype
//       chain has no usable `constructor`, and when a constructor's `name`
//       is a getter.
//
//   now() -> number
//       Monotonic milliseconds, fractional (console.time*).
//
//   stackFrames() -> string
//       The current JavaScript stack formatted exactly as the runtime formats
//       Error.stack frames ("    at fn (program.ts:3:5)" lines joined by
//       "\n", no header line, no trailing newline), keeping only frames whose
//       script is the program (this file's frames and other runtime scripts'
//       are dropped), at most 10 frames (V8's default Error.stackTraceLimit,
//       which Node's console.trace uses); "" when there is none. Used by
//       console.trace, which prints "Trace: <message>\n<frames>".
//
//   sharedByteLength(sharedArrayBuffer) -> number
//       SharedArrayBuffer::byte_length. (V8 defines the SharedArrayBuffer
//       global only after a context is deserialized, so its prototype getter
//       cannot be captured in a startup snapshot.)
//
// ---------------------------------------------------------------------------
// Where program code can run while formatting
// ---------------------------------------------------------------------------
// Only where Node runs it too, each a single call whose cost is the
// program's own (and within the compute budget):
//  * An error's `stack`: reading it may run V8's stack formatting, which
//    calls a program-installed Error.prepareStackTrace, or a program-defined
//    `stack` accessor on the error or its classes, exactly as Node's
//    `err.stack` does (a `stack` accessor on Object.prototype is not called).
//  * ToString/ToPrimitive conversions Node performs, when the value or one of
//    its own classes defines toString / valueOf / Symbol.toPrimitive:
//    `%s` (objects without a built-in toString; functions), `%d` (Number()),
//    `%i` (parseInt()), `%f` (parseFloat()), console.count/countReset/time*
//    labels and the first console.assert message argument (template
//    literals), and non-string error name/message/stack or function names.
//  * `%j`: JSON.stringify runs toJSON methods and getters.
//  * console.dir options the program passes: `sorted: fn` calls the
//    comparator, `getters: true|'get'|'set'` invokes getters.
// Never: other getters, Proxy traps (a Proxy is formatted as its target),
// Symbol.hasInstance, Symbol.toStringTag getters, util.inspect.custom
// methods, iterator protocols, replaced built-ins. Exceptions thrown by the
// program code above propagate to the console call, as in Node.
//
// Known, intentional differences from Node are the cases marked
// `knownDifference` in __test__/console-corpus.mjs; see also
// src/isolate/js/console/README.md.
(function (natives) {
  'use strict';

  // =========================================================================
  // 1. Captured intrinsics. Nothing below this section looks anything up on
  //    a global or on a built-in prototype at call time.
  // =========================================================================
  const FunctionPrototype = Function.prototype;
  const uncurryThis = FunctionPrototype.bind.bind(FunctionPrototype.call);
  const FunctionPrototypeBind = uncurryThis(FunctionPrototype.bind);
  const OriginalFunctionToString = FunctionPrototype.toString;
  const FunctionPrototypeToString = uncurryThis(OriginalFunctionToString);
  const ReflectApply = Reflect.apply;
  const ReflectOwnKeys = Reflect.ownKeys;

  const ObjectPrototype = Object.prototype;
  const ObjectKeys = Object.keys;
  const ObjectValues = Object.values;
  const ObjectGetOwnPropertyNames = Object.getOwnPropertyNames;
  const ObjectGetOwnPropertySymbols = Object.getOwnPropertySymbols;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectSetPrototypeOf = Object.setPrototypeOf;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectCreate = Object.create;
  const ObjectFreeze = Object.freeze;
  const ObjectIs = Object.is;
  const ObjectPrototypeHasOwnProperty = uncurryThis(ObjectPrototype.hasOwnProperty);
  const ObjectPrototypePropertyIsEnumerable = uncurryThis(ObjectPrototype.propertyIsEnumerable);

  const ArrayCtor = Array;
  const ArrayPrototype = Array.prototype;
  const ArrayIsArray = Array.isArray;
  const ArrayPrototypeJoin = uncurryThis(ArrayPrototype.join);
  const ArrayPrototypeSort = uncurryThis(ArrayPrototype.sort);

  const StringCtor = String;
  const StringPrototype = String.prototype;
  const StringPrototypeSlice = uncurryThis(StringPrototype.slice);
  const StringPrototypeCharCodeAt = uncurryThis(StringPrototype.charCodeAt);
  const StringPrototypeCodePointAt = uncurryThis(StringPrototype.codePointAt);
  const StringPrototypeIndexOf = uncurryThis(StringPrototype.indexOf);
  const StringPrototypeLastIndexOf = uncurryThis(StringPrototype.lastIndexOf);
  const StringPrototypeIncludes = uncurryThis(StringPrototype.includes);
  const StringPrototypeStartsWith = uncurryThis(StringPrototype.startsWith);
  const StringPrototypeEndsWith = uncurryThis(StringPrototype.endsWith);
  const StringPrototypeRepeat = uncurryThis(StringPrototype.repeat);
  const StringPrototypePadStart = uncurryThis(StringPrototype.padStart);
  const StringPrototypePadEnd = uncurryThis(StringPrototype.padEnd);
  const StringPrototypeNormalize = uncurryThis(StringPrototype.normalize);
  const StringPrototypeToLowerCase = uncurryThis(StringPrototype.toLowerCase);
  const StringPrototypeValueOf = uncurryThis(StringPrototype.valueOf);

  const NumberCtor = Number;
  const NumberIsNaN = Number.isNaN;
  const NumberIsFinite = Number.isFinite;
  const NumberParseInt = Number.parseInt;
  const NumberParseFloat = Number.parseFloat;
  const NumberPrototypeToString = uncurryThis(Number.prototype.toString);
  const NumberPrototypeToFixed = uncurryThis(Number.prototype.toFixed);
  const NumberPrototypeValueOf = uncurryThis(Number.prototype.valueOf);
  const BooleanPrototypeValueOf = uncurryThis(Boolean.prototype.valueOf);
  const BigIntPrototypeValueOf = uncurryThis(BigInt.prototype.valueOf);
  const SymbolPrototypeValueOf = uncurryThis(Symbol.prototype.valueOf);
  const SymbolPrototypeToString = uncurryThis(Symbol.prototype.toString);
  const SymbolToStringTag = Symbol.toStringTag;
  const SymbolToPrimitive = Symbol.toPrimitive;

  const NumberPrototype = Number.prototype;
  const BooleanPrototype = Boolean.prototype;
  const BigIntPrototype = BigInt.prototype;
  const SymbolPrototype = Symbol.prototype;
  const DatePrototype = Date.prototype;
  const BooleanPrototypeToString = uncurryThis(BooleanPrototype.toString);
  const BigIntPrototypeToString = uncurryThis(BigIntPrototype.toString);
  const MathMin = Math.min;
  const MathMax = Math.max;
  const MathFloor = Math.floor;
  const MathRound = Math.round;
  const MathSqrt = Math.sqrt;
  const MathTrunc = Math.trunc;
  const MathCeil = Math.ceil;

  const JSONStringify = JSON.stringify;

  const DatePrototypeGetTime = uncurryThis(Date.prototype.getTime);
  const DatePrototypeToISOString = uncurryThis(Date.prototype.toISOString);
  const DatePrototypeToString = uncurryThis(Date.prototype.toString);

  const RegExpPrototype = RegExp.prototype;
  const SetCtor = Set;
  const SetPrototypeHas = uncurryThis(Set.prototype.has);
  const SetPrototypeAdd = uncurryThis(Set.prototype.add);
  const RegExpPrototypeExec = uncurryThis(RegExpPrototype.exec);
  function getterOf(proto, key) {
    const d = ObjectGetOwnPropertyDescriptor(proto, key);
    return d === undefined ? undefined : d.get;
  }
  const RegExpPrototypeGetSource = uncurryThis(getterOf(RegExpPrototype, 'source'));
  // [flag character, uncurried getter] in the order of RegExp.prototype.flags.
  const regExpFlagGetters = [];
  {
    const names = ['hasIndices', 'd', 'global', 'g', 'ignoreCase', 'i', 'multiline', 'm',
      'dotAll', 's', 'unicode', 'u', 'unicodeSets', 'v', 'sticky', 'y'];
    for (let i = 0; i < names.length; i += 2) {
      const g = getterOf(RegExpPrototype, names[i]);
      if (g !== undefined) {
        regExpFlagGetters[regExpFlagGetters.length] = names[i + 1];
        regExpFlagGetters[regExpFlagGetters.length] = uncurryThis(g);
      }
    }
  }

  const MapCtor = Map;
  const MapPrototypeGetSize = uncurryThis(getterOf(Map.prototype, 'size'));
  const MapPrototypeEntries = uncurryThis(Map.prototype.entries);
  const MapPrototypeGet = uncurryThis(Map.prototype.get);
  const MapPrototypeSet = uncurryThis(Map.prototype.set);
  const MapPrototypeHas = uncurryThis(Map.prototype.has);
  const MapPrototypeDelete = uncurryThis(Map.prototype.delete);
  const MapIteratorPrototypeNext = uncurryThis(ObjectGetPrototypeOf(new Map().entries()).next);
  const SetPrototypeGetSize = uncurryThis(getterOf(Set.prototype, 'size'));
  const SetPrototypeValues = uncurryThis(Set.prototype.values);
  const SetIteratorPrototypeNext = uncurryThis(ObjectGetPrototypeOf(new Set().values()).next);

  const TypedArrayPrototype = ObjectGetPrototypeOf(Uint8Array.prototype);
  const TypedArrayPrototypeGetLength = uncurryThis(getterOf(TypedArrayPrototype, 'length'));
  const TypedArrayPrototypeGetByteLength = uncurryThis(getterOf(TypedArrayPrototype, 'byteLength'));
  const TypedArrayPrototypeGetByteOffset = uncurryThis(getterOf(TypedArrayPrototype, 'byteOffset'));
  const TypedArrayPrototypeGetBuffer = uncurryThis(getterOf(TypedArrayPrototype, 'buffer'));
  const TypedArrayToStringTagGetter = getterOf(TypedArrayPrototype, SymbolToStringTag);
  const TypedArrayPrototypeGetSymbolToStringTag = uncurryThis(TypedArrayToStringTagGetter);
  const Uint8ArrayCtor = Uint8Array;
  const ArrayBufferPrototypeGetByteLength = uncurryThis(getterOf(ArrayBuffer.prototype, 'byteLength'));
  const DataViewPrototypeGetByteLength = uncurryThis(getterOf(DataView.prototype, 'byteLength'));
  const DataViewPrototypeGetByteOffset = uncurryThis(getterOf(DataView.prototype, 'byteOffset'));
  const DataViewPrototypeGetBuffer = uncurryThis(getterOf(DataView.prototype, 'buffer'));

  const ErrorPrototype = Error.prototype;
  const ErrorCaptureStackTrace = Error.captureStackTrace;
  const TypeErrorCtor = TypeError;
  const RangeErrorPrototype = RangeError.prototype;

  // Since V8 ~12 `error.stack` is an own accessor whose getter/setter pair is
  // shared by all errors (V8 11, in Node 20, shows a data property). We
  // present that native accessor as the data property Node 20 shows.
  const NativeErrorStackGetter = getterOf(new Error(), 'stack');

  // Iterator.prototype[Symbol.toStringTag] is a native accessor in newer V8.
  const IteratorCtor = typeof Iterator === 'function' ? Iterator : undefined;
  const IteratorPrototype = IteratorCtor === undefined ? undefined : IteratorCtor.prototype;
  const IteratorToStringTagGetter = IteratorCtor === undefined ? undefined :
    getterOf(IteratorPrototype, SymbolToStringTag);

  const nTypeTag = natives.typeTag;
  const nProxyTarget = natives.proxyTarget;
  const nProxyHandler = natives.proxyHandler;
  const nPromiseState = natives.promiseState;
  const nPreviewEntries = natives.previewEntries;
  const nOwnNonIndexKeys = natives.ownNonIndexKeys;
  const nConstructorName = natives.constructorName;
  const nNow = natives.now;
  const nStackFrames = natives.stackFrames;
  const nSharedByteLength = natives.sharedByteLength;

  // Arrays we write into. Their prototype chain is null, so element stores
  // never reach a program-defined indexed setter. (List.prototype is never
  // reachable by the program; it is not frozen because V8 then takes a slow
  // path for every element store.)
  class List extends ArrayCtor { constructor() { super(); } }
  ObjectSetPrototypeOf(List.prototype, null);
  function newList() { return new List(); }
  function push(list, value) { list[list.length] = value; }

  const T_OBJECT = 0;
  const T_PROXY = 1;
  const T_ARRAY = 2;
  const T_FUNCTION = 3;
  const T_ASYNC_FUNCTION = 4;
  const T_GENERATOR_FUNCTION = 5;
  const T_ASYNC_GENERATOR_FUNCTION = 6;
  const T_ERROR = 7;
  const T_DATE = 8;
  const T_REGEXP = 9;
  const T_MAP = 10;
  const T_SET = 11;
  const T_WEAK_MAP = 12;
  const T_WEAK_SET = 13;
  const T_MAP_ITERATOR = 14;
  const T_SET_ITERATOR = 15;
  const T_PROMISE = 16;
  const T_ARRAY_BUFFER = 17;
  const T_SHARED_ARRAY_BUFFER = 18;
  const T_DATA_VIEW = 19;
  const T_TYPED_ARRAY = 20;
  const T_NUMBER_OBJECT = 21;
  const T_STRING_OBJECT = 22;
  const T_BOOLEAN_OBJECT = 23;
  const T_BIGINT_OBJECT = 24;
  const T_SYMBOL_OBJECT = 25;
  const T_ARGUMENTS = 26;
  const T_MODULE_NAMESPACE = 27;

  const kObjectType = 0;
  const kArrayType = 1;
  const kArrayExtrasType = 2;

  const kWeak = 0;
  const kIterator = 1;
  const kMapEntries = 2;

  const kMinLineLength = 16;

  // ---- Which Node's output we reproduce ----
  // util.inspect changed between the Node majors the addon runs under (see
  // src/isolate/js/console/README.md, "Node majors"). Every difference is decided at call
  // time from `nodeMajor`, so one compiled script (and one startup snapshot)
  // serves all of them: the runtime calls setNodeMajor(host major) once per
  // run, before the program runs. A major we do not know (older than 20,
  // newer than 26, odd, not a number) follows the newest LTS we support.
  const NEWEST_LTS_MAJOR = 24;
  let nodeMajor = NEWEST_LTS_MAJOR;
  function setNodeMajor(major) {
    nodeMajor = major === 20 || major === 22 || major === 24 || major === 26 ? major : NEWEST_LTS_MAJOR;
    return nodeMajor;
  }

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
  // Node's isInstanceof (lib/internal/util/inspect.js), as of 20.x–26.x; differs: walks the prototype chain: no Symbol.hasInstance, no Proxy traps
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

  // =========================================================================
  // 3. Strings
  // =========================================================================
  // 3. Text helpers
  // =========================================================================

  function joinWith(parts, separator) {
    const n = parts.length;
    if (n === 0) return '';
    let out = parts[0];
    for (let i = 1; i < n; i++) out += separator + parts[i];
    return out;
  }

  function replaceNewlines(str, replacement) {
    let at = StringPrototypeIndexOf(str, '\n');
    if (at === -1) return str;
    let out = '';
    let from = 0;
    do {
      out += StringPrototypeSlice(str, from, at) + replacement;
      from = at + 1;
      at = StringPrototypeIndexOf(str, '\n', from);
    } while (at !== -1);
    return out + StringPrototypeSlice(str, from);
  }

  function splitString(str, sep) {
    const out = newList();
    let from = 0;
    for (;;) {
      const at = StringPrototypeIndexOf(str, sep, from);
      if (at === -1) break;
      push(out, StringPrototypeSlice(str, from, at));
      from = at + sep.length;
    }
    push(out, StringPrototypeSlice(str, from));
    return out;
  }

  const HEX_DIGITS = '0123456789ABCDEF';
  function hexByte(n) {
    return StringPrototypeSlice(HEX_DIGITS, n >> 4, (n >> 4) + 1) +
      StringPrototypeSlice(HEX_DIGITS, n & 15, (n & 15) + 1);
  }

  // The escape Node uses for a code unit below U+00A0 that needs one.
  // Node's escapeFn (lib/internal/util/inspect.js), as of 20.x–26.x; differs: a switch instead of the meta table
  function escapeFn(c) {
    switch (c) {
      case 8: return '\\b';
      case 9: return '\\t';
      case 10: return '\\n';
      case 12: return '\\f';
      case 13: return '\\r';
      case 39: return "\\'";
      case 92: return '\\\\';
      default: return `\\x${hexByte(c)}`;
    }
  }

  // Escape C0/C1 controls, DEL, the backslash, lone surrogates, and the
  // single quote when `escapeQuote` is set.
  function escapeText(str, escapeQuote) {
    let out = '';
    let from = 0;
    const n = str.length;
    for (let i = 0; i < n; i++) {
      const c = StringPrototypeCharCodeAt(str, i);
      let rep;
      if (c < 0xa0) {
        if (c >= 32 && c < 0x7f && c !== 92 && (c !== 39 || !escapeQuote)) continue;
        rep = escapeFn(c);
      } else if (c >= 0xd800 && c <= 0xdfff) {
        if (c < 0xdc00 && i + 1 < n) {
          const d = StringPrototypeCharCodeAt(str, i + 1);
          if (d >= 0xdc00 && d <= 0xdfff) {
            i++;
            continue;
          }
        }
        rep = `\\u${NumberPrototypeToString(c, 16)}`;
      } else {
        continue;
      }
      out += StringPrototypeSlice(str, from, i) + rep;
      from = i + 1;
    }
    return from === 0 ? str : out + StringPrototypeSlice(str, from);
  }

  // A string literal as Node prints it: single quotes, or double quotes when
  // the text has a single quote, or backticks when it has both (and no `${`).
  // Node's strEscape (lib/internal/util/inspect.js), as of 20.x–26.x; differs: no regexps (a loop over code units, escapeText)
  function strEscape(str) {
    if (StringPrototypeIncludes(str, "'")) {
      if (!StringPrototypeIncludes(str, '"')) return `"${escapeText(str, false)}"`;
      if (!StringPrototypeIncludes(str, '`') && !StringPrototypeIncludes(str, '${')) {
        return `\`${escapeText(str, false)}\``;
      }
    }
    return `'${escapeText(str, true)}'`;
  }

  // A key printed bare: [A-Za-z_][A-Za-z0-9_]* (no `$`).
  function isPlainKey(key) {
    const n = key.length;
    if (n === 0) return false;
    for (let i = 0; i < n; i++) {
      const c = StringPrototypeCharCodeAt(key, i);
      const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
      if (!letter && (i === 0 || c < 48 || c > 57)) return false;
    }
    return true;
  }

  // A canonical array index spelling: "0" or [1-9][0-9]*.
  function isIndexSpelling(key) {
    const n = key.length;
    if (n === 0) return false;
    if (StringPrototypeCharCodeAt(key, 0) === 48) return n === 1;
    for (let i = 0; i < n; i++) {
      const c = StringPrototypeCharCodeAt(key, i);
      if (c < 48 || c > 57) return false;
    }
    return true;
  }

  // ---- Terminal escape sequences ----

  // Remove SGR color codes of the form ESC [ d m / ESC [ dd m (what our own
  // colored output contains).
  function removeColors(str) {
    let at = StringPrototypeIndexOf(str, '\u001b[');
    if (at === -1) return str;
    let out = '';
    let from = 0;
    while (at !== -1) {
      let j = at + 2;
      let digits = 0;
      while (digits < 2 && j < str.length && isDigitCode(StringPrototypeCharCodeAt(str, j))) {
        j++;
        digits++;
      }
      if (digits !== 0 && j < str.length && StringPrototypeCharCodeAt(str, j) === 109) {
        out += StringPrototypeSlice(str, from, at);
        from = j + 1;
        at = StringPrototypeIndexOf(str, '\u001b[', from);
      } else {
        at = StringPrototypeIndexOf(str, '\u001b[', at + 1);
      }
    }
    return out + StringPrototypeSlice(str, from);
  }

  function isDigitCode(c) {
    return c >= 48 && c <= 57;
  }
  function isAlnumCode(c) {
    return isDigitCode(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  }
  // Characters allowed in an OSC-style parameter: alnum and -/#&.:=?%@~_
  function isParamCode(c) {
    return isAlnumCode(c) || c === 45 || c === 47 || c === 35 || c === 38 || c === 46 ||
      c === 58 || c === 61 || c === 63 || c === 37 || c === 64 || c === 126 || c === 95;
  }
  // Characters that may follow the introducer: [ ] ( ) # ; ?
  function isIntroCode(c) {
    return c === 91 || c === 93 || c === 40 || c === 41 || c === 35 || c === 59 || c === 63;
  }
  // A CSI final character: digits, A-P, R-T, Z, c, f-n, q-u, y, = > < ~
  function isFinalCode(c) {
    return isDigitCode(c) || (c >= 65 && c <= 80) || (c >= 82 && c <= 84) || c === 90 ||
      c === 99 || (c >= 102 && c <= 110) || (c >= 113 && c <= 117) || c === 121 ||
      c === 61 || c === 62 || c === 60 || c === 126;
  }
  // Length of a string terminator (BEL, ESC \, or ST) at i, or 0.
  function terminatorAt(s, i) {
    if (i >= s.length) return 0;
    const c = StringPrototypeCharCodeAt(s, i);
    if (c === 7 || c === 0x9c) return 1;
    if (c === 27 && i + 1 < s.length && StringPrototypeCharCodeAt(s, i + 1) === 92) return 2;
    return 0;
  }
  function codeAt(s, i) {
    return i < s.length ? StringPrototypeCharCodeAt(s, i) : -1;
  }
  function runOfDigits(s, i) {
    let n = 0;
    while (isDigitCode(codeAt(s, i + n))) n++;
    return n;
  }
  // End of an OSC-style sequence body starting at p, or -1:
  // (";" param+)* or alnum+ (";" param*)*, then a terminator.
  function oscEnd(s, p) {
    let q = p;
    while (codeAt(s, q) === 59 && isParamCode(codeAt(s, q + 1))) {
      q += 2;
      while (isParamCode(codeAt(s, q))) q++;
    }
    let t = terminatorAt(s, q);
    if (t !== 0) return q + t;
    if (isAlnumCode(codeAt(s, p))) {
      q = p + 1;
      while (isAlnumCode(codeAt(s, q))) q++;
      while (codeAt(s, q) === 59) {
        q++;
        while (isParamCode(codeAt(s, q))) q++;
      }
      t = terminatorAt(s, q);
      if (t !== 0) return q + t;
    }
    return -1;
  }
  // End of a CSI-style body starting at p, or -1: optionally up to 4 digits
  // followed by (";" up to 4 digits)*, then a final character. Because a
  // digit is itself a final character, a body that starts with a digit
  // always ends somewhere: at the first final character after the greedy
  // parameters, else right after the last parameter that has a digit.
  function csiEnd(s, p) {
    const lead = MathMin(4, runOfDigits(s, p));
    if (lead === 0) return isFinalCode(codeAt(s, p)) ? p + 1 : -1;
    let q = p + lead;
    let fallback = q;
    while (codeAt(s, q) === 59) {
      const d = MathMin(4, runOfDigits(s, q + 1));
      q += 1 + d;
      if (d !== 0) fallback = q;
    }
    return isFinalCode(codeAt(s, q)) ? q + 1 : fallback;
  }
  // The first string terminator at or after `from` in `s`, or -1. The last
  // answer is kept, so a string with many unterminated OSC introducers is
  // scanned once, not once per introducer.
  let terminatorString;
  let terminatorFrom = 0;
  let terminatorFound = -1;
  function firstTerminator(s, from) {
    if (s === terminatorString && from >= terminatorFrom && (terminatorFound === -1 || terminatorFound >= from)) {
      return terminatorFound;
    }
    let found = -1;
    for (let j = from; j < s.length; j++) {
      if (terminatorAt(s, j) !== 0) {
        found = j;
        break;
      }
    }
    terminatorString = s;
    terminatorFrom = from;
    terminatorFound = found;
    return found;
  }

  // Node 24+'s pattern (ansi-regex 6.2): an OSC sequence "ESC ] ... "
  // up to its first terminator, else a CSI-style sequence whose parameters
  // may also be separated by ':'.
  function escapeSequenceLength24(s, i) {
    if (StringPrototypeCharCodeAt(s, i) === 27 && codeAt(s, i + 1) === 93) {
      const at = firstTerminator(s, i + 2);
      if (at !== -1) return at + terminatorAt(s, at) - i;
    }
    let p = i + 1;
    while (isIntroCode(codeAt(s, p))) p++;
    // (No intro character is a digit or a final character, so only the
    // longest intro can lead to a match.)
    const lead = MathMin(4, runOfDigits(s, p));
    if (lead === 0) return isFinalCode(codeAt(s, p)) ? p + 1 - i : 0;
    let q = p + lead;
    let fallback = q;
    for (;;) {
      const c = codeAt(s, q);
      if (c !== 59 && c !== 58) break;
      const d = MathMin(4, runOfDigits(s, q + 1));
      q += 1 + d;
      if (d !== 0) fallback = q;
    }
    return (isFinalCode(codeAt(s, q)) ? q + 1 : fallback) - i;
  }

  // Length of the escape sequence starting at i (ESC or CSI there), or 0.
  function escapeSequenceLength(s, i) {
    if (nodeMajor >= 24) return escapeSequenceLength24(s, i);
    let maxIntro = i + 1;
    while (isIntroCode(codeAt(s, maxIntro))) maxIntro++;
    for (let p = maxIntro; p > i; p--) {
      let end = oscEnd(s, p);
      if (end === -1) end = csiEnd(s, p);
      if (end !== -1) return end - i;
    }
    return 0;
  }
  // Remove terminal control sequences (what Node's stripVTControlCharacters
  // removes) before measuring display width.
  // Node's stripVTControlCharacters (lib/internal/util/inspect.js), as of 20.x–26.x; differs: no regexp: a scanner of the pattern (ansi-regex 6.2 on 24+)
  function stripVTControlCharacters(str) {
    let out = '';
    let from = 0;
    const n = str.length;
    for (let i = 0; i < n; i++) {
      const c = StringPrototypeCharCodeAt(str, i);
      if (c !== 27 && c !== 0x9b) continue;
      const len = escapeSequenceLength(str, i);
      if (len === 0) continue;
      out += StringPrototypeSlice(str, from, i);
      from = i + len;
      i = from - 1;
    }
    return from === 0 ? str : out + StringPrototypeSlice(str, from);
  }

  // ---- Display width ----
  // Node measures display width with ICU (East Asian Width, emoji
  // presentation, zero-width categories). The isolate has no such API, so
  // WIDTH_TABLE is a snapshot of the per-code-point widths Node 20's ICU
  // reports (scripts/gen-width-table.cjs): comma-separated ranges
  // "<gap><w><len>" (base 36; gap from the previous range's end, '.' width 0,
  // ':' width 2). Unlisted code points are 1 column wide.
  const WIDTH_TABLE =
    '0.v,2n.w,gw.33,7n.6,7b.18,1.0,1.1,1.1,1.0,1k.5,a.a,1.0,1a.k,g.0,2t.7,1.5,2.1,1.3,x.0,1.0,u.q,' +
    '2j.a,1m.8,9.0,o.3,1.8,1.2,1.4,17.2,1g.1,5.8,16.1k,1j.0,1.0,4.7,4.0,3.6,a.1,t.0,1m.0,4.3,8.0,k.1,' +
    'q.0,2.1,1l.0,4.1,4.1,2.2,3.0,u.1,3.0,b.1,1l.0,4.4,1.1,4.0,k.1,m.5,1.0,1m.0,2.0,1.3,8.0,7.1,b.1,' +
    'u.0,1p.0,c.0,1e.0,3.0,1j.0,1.2,5.2,1.3,7.1,b.1,t.0,1m.0,2.0,6.0,5.1,k.1,s.1,1l.1,4.3,8.0,k.1,t.0,' +
    '20.0,7.2,1.0,2i.0,2.6,c.7,2q.0,2.8,b.6,21.1,r.0,1.0,1.0,1j.d,1.4,1.1,5.a,1.z,9.0,2u.3,1.5,1.1,' +
    '2.1,p.1,4.2,g.3,d.0,2.1,6.0,f.0,2q:2n,e5.2,qa.2,t.1,u.1,u.1,1s.1,1.6,8.0,2.a,9.0,19.4,39.1,y.0,' +
    '3a.2,4.1,9.0,6.2,63.1,2.0,1m.0,1.6,1.0,1.0,2.7,6.9,2.0,1c.19,2.b,k.3,1c.0,1.4,1.0,5.0,14.8,c.1,' +
    'w.3,2.1,1.2,1k.0,1.1,3.0,1.2,1m.7,2.1,48.2,1.c,1.6,4.0,6.0,3.1,5i.1r,ej.4,q.4,1d.4,1.9,2o.w,fd:1,' +
    'd:1,5a:3,3:0,2:0,eh:1,l:1,q:7,g:b,17:0,a:5,3:0,d:0,8:1,h:1,5:1,8:0,5:0,l:0,7:1,1:0,4:0,2:0,7:0,' +
    '4:1,s:0,z:0,1:0,4:2,1:0,1p:2,o:0,e:0,nv:1,1f:0,4:0,bd.2,3x.0,2o.v,3k:p,1:2g,c:5x,q:26,2:2d,2:2u,' +
    '5:16,1:2l,1:2d,9:1b,1:13,8:mkc,3:1i,bs.3,1.9,w.1,28.1,7k.0,3.0,4.0,p.1,5.0,47.1,q.h,d.0,12.7,p.a,' +
    'e:s,3.2,1c.0,2.3,2.1,13.0,1v.5,2.1,2.1,c.0,8.0,1b.0,1f.0,1.2,2.1,5.1,1.0,16.1,8.0,6m.0,2.0,4.0,' +
    'i:8mb,6l8:e7,u.0,kh.f,0:9,6.f,0:y,1:i,1:3,43.0,1:2n,3j:6,i.2,e9.0,6a.0,45.4,1ae.2,1.1,5.3,14.2,' +
    '4.0,4l.1,fx.3,1t.4,8t.1,25.5,1y.a,1d.3,3f.0,1i.e,15.0,2.1,a.2,1d.3,2.1,2.0,4.0,a.0,1e.2,10.4,1.7,' +
    '1q.0,c.1,1g.8,a.3,2.0,2n.2,2.0,1.1,6.0,2.0,4d.0,3.7,l.1,1l.1,3.0,11.6,3.4,1y.5,d.0,1.0,1.0,e.1,' +
    '2d.7,2.2,1.0,n.0,2c.5,1.0,4.1,1.1,6m.3,6.1,1.1,r.1,2d.7,2.0,1.1,2y.0,1.0,2.5,1.0,2t.0,1.0,2.3,' +
    '1.4,77.8,1.1,74.1,1.0,4.0,40.3,2.1,4.0,w.9,14.5,2.3,8.0,9.5,2.2,1a.c,1.1,5i.0,1.2,1.0,5l.6,1.5,' +
    '1.0,2a.l,2.6,1.1,1.1,3e.5,3.0,1.1,1.6,1.0,20.1,3.0,1.0,9n.1,b.1,1g.4,5.0,1.0,n.0,445.g,6.e,8ug.b,' +
    '3.2,1xc.4,1n.6,t4.0,1r.3,25:4,b:6,9:5p1,15:v,2p:36,6pp:3,1:6,1:1,1:82,f:0,t:2,2:0,e:3,8:az,1wh.1,' +
    '1.3,3mk.19,2.m,f4.2,9.f,2.6,u.3,44.2,57:2e,9:m,1ah.1i,4.1d,8.0,e.0,m.4,1.e,11s.6,1.g,2.6,1.1,1.4,' +
    '2s.0,4g.6,af.0,1p.3,e4.3,72.1,6r.0,2.0,7.1,5.0,d6.6,31.6,1bt:0,5m:0,5a:0,2:9,23:s,d:17,4:8,7:1,' +
    'e:5,4a:w,c:8,1:1x,1:l,c:16,4:4,c:g,3:0,3:1y,1:0,1:56,2:1q,d:3,1:n,i:0,q:1,d:0,2e:2c,1c:1x,6:0,' +
    '3:2,2:3,3:3,b:1,7:8,6b:b,4:0,7v:1a,1:9,1:54,34:c,3:a,3:1k,1:0,4:f,2:b,4:9,zr:1ekd,2:1ekd,e1oj.0,' +
    'u.2n,3k.6n';
  let widthStarts;
  let widthEnds;
  let widthValues;
  function loadWidthTable() {
    widthStarts = newList();
    widthEnds = newList();
    widthValues = newList();
    let last = -1;
    let pos = 0;
    const s = WIDTH_TABLE;
    while (pos < s.length) {
      let comma = StringPrototypeIndexOf(s, ',', pos);
      if (comma === -1) comma = s.length;
      let mark = pos;
      while (StringPrototypeCharCodeAt(s, mark) !== 46 && StringPrototypeCharCodeAt(s, mark) !== 58) mark++;
      const start = last + 1 + NumberParseInt(StringPrototypeSlice(s, pos, mark), 36);
      const end = start + NumberParseInt(StringPrototypeSlice(s, mark + 1, comma), 36);
      push(widthStarts, start);
      push(widthEnds, end);
      push(widthValues, StringPrototypeCharCodeAt(s, mark) === 46 ? 0 : 2);
      last = end;
      pos = comma + 1;
    }
  }
  function codePointWidth(cp) {
    if (cp < 32) return 0;
    if (cp < 127) return 1;
    if (cp >= 0xd800 && cp <= 0xdfff) return 1;
    if (widthStarts === undefined) loadWidthTable();
    let lo = 0;
    let hi = widthStarts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (cp < widthStarts[mid]) hi = mid - 1;
      else if (cp > widthEnds[mid]) lo = mid + 1;
      else return widthValues[mid];
    }
    return 1;
  }
  // Columns needed to display `str`. ASCII is counted directly (controls 0);
  // from the first non-ASCII code unit on, the rest is NFC-normalized and
  // measured per code point, as Node does.
  // Node's getStringWidth (lib/internal/util/inspect.js), as of 20.x–26.x; differs: a width table generated from ICU instead of ICU
  function getStringWidth(str, stripEscapes) {
    if (stripEscapes) str = stripVTControlCharacters(str);
    let width = 0;
    const n = str.length;
    for (let i = 0; i < n; i++) {
      const c = StringPrototypeCharCodeAt(str, i);
      if (c < 127) {
        if (c >= 32) width++;
        continue;
      }
      const rest = StringPrototypeNormalize(StringPrototypeSlice(str, i), 'NFC');
      for (let j = 0; j < rest.length; j++) {
        const cp = StringPrototypeCodePointAt(rest, j);
        if (cp > 0xffff) j++;
        width += codePointWidth(cp);
      }
      break;
    }
    return width;
  }

  // =========================================================================
  // 4. Options and per-call state
  // =========================================================================

  // Node's stylizeNoColor (lib/internal/util/inspect.js), as of 20.x–26.x
  function stylizeNoColor(text) {
    return text;
  }

  // ANSI SGR [on, off] codes of Node's default inspect styles.
  function styleOn(style) {
    switch (style) {
      case 'special': return 36;
      case 'number': case 'bigint': case 'boolean': return 33;
      case 'undefined': return 90;
      case 'null': return 1;
      case 'string': case 'symbol': return 32;
      case 'date': return 35;
      case 'regexp': return 31;
      case 'module': return 4;
      default: return 0;
    }
  }
  // Node's stylizeWithColor (lib/internal/util/inspect.js), as of 20.x–26.x; differs: fixed styles and colours: a program cannot change inspect.styles/colors
  function stylizeWithColor(text, style) {
    if (style === 'regexp' && nodeMajor >= 26) return highlightRegExp(text);
    const on = styleOn(style);
    if (on === 0) return text;
    const off = on === 1 ? 22 : on === 4 ? 24 : 39;
    return `\u001b[${on}m${text}\u001b[${off}m`;
  }

  // Node 26+ colours a regexp by its syntax: each token gets the colour of
  // its nesting depth from a five-colour palette (green, red, yellow, cyan,
  // magenta), with quantifiers, alternation and anchors three steps deeper,
  // `.` two. A tolerant single pass, reproducing Node's heuristics exactly
  // (the text passed in may start with a class label, as in Node).
  const REGEXP_PALETTE = newList();
  push(REGEXP_PALETTE, '\u001b[32m');  // green
  push(REGEXP_PALETTE, '\u001b[31m');  // red
  push(REGEXP_PALETTE, '\u001b[33m');  // yellow
  push(REGEXP_PALETTE, '\u001b[36m');  // cyan
  push(REGEXP_PALETTE, '\u001b[35m');  // magenta
  // Node's highlightRegExp (lib/internal/util/inspect.js), as of 26.x
  function highlightRegExp(re) {
    const n = re.length;
    let out = '';
    let i = 0;
    let depth = 0;
    let inClass = false;
    const at = (k) => (k >= 0 && k < n ? re[k] : '');
    const isDigit = (c) => c !== '' && c >= '0' && c <= '9';
    const paint = (text) => {
      // (A negative depth, which unbalanced input can reach, takes the first.)
      out += `${REGEXP_PALETTE[depth % 5] || REGEXP_PALETTE[0]}${text}\u001b[39m`;
    };
    // Paint one step (or `by` steps) deeper, then move on `advance` characters.
    const paintDeeper = (text, by, advance) => {
      depth += by;
      paint(text);
      depth -= by;
      i += advance;
    };
    // `open` was read, up to the character before re[i]; a closed group
    // "open body close" is painted as a unit, an unclosed one as `open` only.
    const paintGroup = (open, close, shallower) => {
      i++;
      let body = '';
      while (i < n && re[i] !== close) body += re[i++];
      if (i < n) {
        depth -= shallower;
        paint(open);
        paintDeeper(body, 1, 1);
        paint(close);
        depth += shallower;
      } else {
        paintDeeper(open, 1, -body.length);
      }
    };

    paint('/');
    depth++;
    i = 1;
    while (i < n) {
      const c = re[i];
      if (inClass) {
        if (c === '\\') {
          let seq = '\\';
          i++;
          if (i < n) {
            seq += re[i++];
            const kind = seq[1];
            if ((kind === 'u' || kind === 'p' || kind === 'P') && at(i) === '{') {
              paintGroup(`${seq}{`, '}', 0);
              continue;
            }
            if (kind === 'x') {
              seq += StringPrototypeSlice(re, i, i + 2);
              i += 2;
            }
          }
          paint(seq);
        } else if (c === ']') {
          depth--;
          paint(']');
          i++;
          inClass = false;
        } else if (c === '-' && re[i - 1] !== '[' && i + 1 < n && re[i + 1] !== ']') {
          paintDeeper('-', 1, 1);
        } else {
          paint(c);
          i++;
        }
      } else if (c === '[') {
        paint('[');
        depth++;
        i++;
        inClass = true;
      } else if (c === '(') {
        paint('(');
        depth++;
        i++;
        if (at(i) === '?') {
          i++;
          const a = at(i);
          const b = at(i + 1);
          if (a === ':' || a === '=' || a === '!') {
            paintDeeper(`?${a}`, -1, 1);
          } else if (a === '<' && (b === '=' || b === '!')) {
            paintDeeper(`?<${b}`, -1, 2);
          } else if (a === '<') {
            i++;
            const from = i;
            while (i < n && re[i] !== '>') i++;
            const name = StringPrototypeSlice(re, from, i);
            if (i < n) {
              depth--;
              paint('?<');
              paintDeeper(name, 1, 0);
              paint('>');
              depth++;
              i++;
            } else {
              paintDeeper('?<', -1, 0);
              paint(name);
            }
          } else {
            paint('?');
          }
        }
      } else if (c === ')') {
        depth--;
        paint(')');
        i++;
      } else if (c === '\\') {
        let seq = '\\';
        i++;
        if (i < n) {
          seq += re[i++];
          const kind = seq[1];
          if (i < n) {
            if (kind === 'u' && re[i] === '{') {
              paintGroup(`${seq}{`, '}', 0);
              continue;
            } else if (kind === 'x') {
              seq += StringPrototypeSlice(re, i, i + 2);
              i += 2;
            } else if (isDigit(kind)) {
              while (i < n && isDigit(re[i])) seq += re[i++];
            } else if (kind === 'k' && re[i] === '<') {
              paintGroup(`${seq}<`, '>', 1);
              continue;
            } else if ((kind === 'p' || kind === 'P') && re[i] === '{') {
              paintGroup(`${seq}{`, '}', 0);
              continue;
            }
          }
        }
        paintDeeper(seq, 1, 0);
      } else if (c === '|' || c === '+' || c === '*' || c === '?' || c === ',' || c === '^' || c === '$') {
        paintDeeper(c, 3, 1);
      } else if (c === '{') {
        i++;
        let low = '';
        while (i < n && isDigit(re[i])) low += re[i++];
        if (low !== '') {
          paint('{');
          depth++;
          paintDeeper(low, 1, 0);
        }
        if (i < n) {
          if (re[i] === ',') {
            if (low === '') {
              paint('{');
              depth++;
            }
            paint(',');
            i++;
          } else if (low === '') {
            paintDeeper('{', 1, 0);
            continue;
          }
        }
        let high = '';
        while (i < n && isDigit(re[i])) high += re[i++];
        if (high !== '') paintDeeper(high, 1, 0);
        if (at(i) === '}') {
          depth--;
          paint('}');
          i++;
        }
        if (at(i) === '?') paintDeeper('?', 3, 1);
      } else if (c === '.') {
        paintDeeper(c, 2, 1);
      } else if (c === '/') {
        break;
      } else {
        paintDeeper(c, 1, 1);
      }
    }
    paintDeeper('/', -1, 1);
    if (i < n) paint(StringPrototypeSlice(re, i));
    return out;
  }

  // An options record carries every inspect option, always all present.
  function makeOptions(depth, showHidden, showProxy, colors, maxArrayLength,
    maxStringLength, breakLength, compact, sorted, getters, numericSeparator) {
    return {
      depth, showHidden, showProxy, colors, maxArrayLength, maxStringLength,
      breakLength, compact, sorted, getters, numericSeparator,
    };
  }
  function copyOptions(o) {
    return makeOptions(o.depth, o.showHidden, o.showProxy, o.colors, o.maxArrayLength,
      o.maxStringLength, o.breakLength, o.compact, o.sorted, o.getters, o.numericSeparator);
  }
  // util.inspect's defaults, and the console's inspectOptions.
  const DEFAULT_OPTIONS = makeOptions(2, false, false, false, 100, 10000, 80, 3, false, false, false);
  const LOG_OPTIONS = makeOptions(4, false, false, false, 100, 10000, 80, 3, false, false, false);

  // Copy the recognised options from a program-provided object: own
  // enumerable data properties only (its getters are not invoked).
  function applyUserOptions(target, opts) {
    // Primitives spread no option keys (`{ ...'str' }` only has index keys).
    if (!isObjectLike(opts)) return target;
    opts = unwrapProxy(opts);
    if (opts === null) return target;
    const keys = ObjectKeys(opts);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const d = ObjectGetOwnPropertyDescriptor(opts, key);
      if (d === undefined || !isDataDescriptor(d)) continue;
      const v = d.value;
      switch (key) {
        case 'depth': target.depth = v; break;
        case 'showHidden': target.showHidden = v; break;
        case 'showProxy': target.showProxy = v; break;
        case 'colors': target.colors = v; break;
        case 'maxArrayLength': target.maxArrayLength = v; break;
        case 'maxStringLength': target.maxStringLength = v; break;
        case 'breakLength': target.breakLength = v; break;
        case 'compact': target.compact = v; break;
        case 'sorted': target.sorted = v; break;
        case 'getters': target.getters = v; break;
        case 'numericSeparator': target.numericSeparator = v; break;
        default: break; // customInspect, stylize and unknown keys are ignored
      }
    }
    return target;
  }

  // The state of one top-level inspection. `null` limits mean "no limit".
  function newState(o) {
    return {
      sizes: newList(),      // output length so far, per indentation
      indent: 0,             // current indentation (columns)
      stack: newList(),      // objects being printed (cycle detection)
      innermost: 0,          // level of the most recently opened object
      refs: undefined,       // Map object -> reference number
      paint: o.colors ? stylizeWithColor : stylizeNoColor,
      showHidden: o.showHidden,
      depth: o.depth === null ? Infinity : o.depth,
      colors: o.colors,
      showProxy: o.showProxy,
      maxArrayLength: o.maxArrayLength === null ? Infinity : o.maxArrayLength,
      maxStringLength: o.maxStringLength === null ? Infinity : o.maxStringLength,
      breakLength: o.breakLength,
      compact: o.compact,
      sorted: o.sorted,
      getters: o.getters,
      numericSeparator: o.numericSeparator,
    };
  }

  function inspectWithOptions(value, o) {
    return formatValue(newState(o), value, 0, false);
  }

  // =========================================================================
  // 5. Primitives
  // =========================================================================

  // '1234567' -> '1_234_567' (a leading '-' is kept apart).
  // Node's addNumericSeparator (lib/internal/util/inspect.js), as of 20.x–26.x
  function addNumericSeparator(digits) {
    const sign = StringPrototypeCharCodeAt(digits, 0) === 45 ? 1 : 0;
    let end = digits.length;
    let grouped = '';
    while (end - sign > 3) {
      grouped = `_${StringPrototypeSlice(digits, end - 3, end)}${grouped}`;
      end -= 3;
    }
    return grouped === '' ? digits : StringPrototypeSlice(digits, 0, end) + grouped;
  }

  // '1234567' -> '123_456_7' (fraction digits, grouped from the left).
  // Node's addNumericSeparatorEnd (lib/internal/util/inspect.js), as of 20.x–26.x
  function addNumericSeparatorEnd(digits) {
    let grouped = '';
    let i = 0;
    while (digits.length - i > 3) {
      grouped += `${StringPrototypeSlice(digits, i, i + 3)}_`;
      i += 3;
    }
    return grouped + StringPrototypeSlice(digits, i);
  }

  // Node's formatNumber (lib/internal/util/inspect.js), as of 20.x–26.x
  function formatNumber(paint, n, separators) {
    let text;
    if (nodeMajor >= 24 && separators) {
      // Node 24+: -0 stays "-0", exponent notation is not grouped.
      text = `${n}`;
      if (ObjectIs(n, -0)) {
        text = '-0';
      } else if (NumberIsNaN(n) || !NumberIsFinite(n) || StringPrototypeIncludes(text, 'e')) {
        // as is
      } else if (MathTrunc(n) === n) {
        text = addNumericSeparator(text);
      } else {
        const dot = StringPrototypeIndexOf(text, '.');
        text = `${addNumericSeparator(StringPrototypeSlice(text, 0, dot))}.${
          addNumericSeparatorEnd(StringPrototypeSlice(text, dot + 1))}`;
      }
      return paint(text, 'number');
    }
    if (!separators) {
      text = ObjectIs(n, -0) ? '-0' : `${n}`;
    } else {
      text = `${n}`;
      if (MathTrunc(n) === n) {
        if (NumberIsFinite(n) && !StringPrototypeIncludes(text, 'e')) text = addNumericSeparator(text);
      } else if (!NumberIsNaN(n)) {
        const dot = StringPrototypeIndexOf(text, '.');
        text = `${addNumericSeparator(StringPrototypeSlice(text, 0, dot))}.${
          addNumericSeparatorEnd(StringPrototypeSlice(text, dot + 1))}`;
      }
    }
    return paint(text, 'number');
  }

  // Node's formatBigInt (lib/internal/util/inspect.js), as of 20.x–26.x
  function formatBigInt(paint, n, separators) {
    const text = `${n}`;
    return paint(`${separators ? addNumericSeparator(text) : text}n`, 'bigint');
  }

  // Node's formatPrimitive (lib/internal/util/inspect.js), as of 20.x–26.x
  function formatPrimitive(paint, v, st) {
    switch (typeof v) {
      case 'string': return showString(paint, v, st);
      case 'number': return formatNumber(paint, v, st.numericSeparator);
      case 'bigint': return formatBigInt(paint, v, st.numericSeparator);
      case 'boolean': return paint(v ? 'true' : 'false', 'boolean');
      case 'undefined': return paint('undefined', 'undefined');
      default: return paint(SymbolPrototypeToString(v), 'symbol');
    }
  }

  function showString(paint, s, st) {
    let tail = '';
    if (s.length > st.maxStringLength) {
      const hidden = s.length - st.maxStringLength;
      s = StringPrototypeSlice(s, 0, st.maxStringLength);
      tail = `... ${hidden} more character${hidden > 1 ? 's' : ''}`;
    }
    if (st.compact !== true && s.length > kMinLineLength &&
        s.length > st.breakLength - st.indent - 4) {
      // Long text: one literal per line (each keeping its '\n'), joined by
      // " +" and a line break indented two columns deeper.
      const glue = ` +\n${StringPrototypeRepeat(' ', st.indent + 2)}`;
      let out = '';
      let from = 0;
      for (;;) {
        const nl = StringPrototypeIndexOf(s, '\n', from);
        if (nl === -1 || nl + 1 >= s.length) break;
        out += paint(strEscape(StringPrototypeSlice(s, from, nl + 1)), 'string') + glue;
        from = nl + 1;
      }
      return out + paint(strEscape(StringPrototypeSlice(s, from)), 'string') + tail;
    }
    return paint(strEscape(s), 'string') + tail;
  }

  // =========================================================================
  // 6. Objects
  // =========================================================================

  // How the entries of an object are laid out.
  const AS_PROPERTIES = 0;    // "key: value" entries
  const AS_ELEMENTS = 1;      // array elements (no key shown)
  const AS_ARRAY_EXTRAS = 2;  // array-like: elements then "key: value" extras

  // Node's formatValue (lib/internal/util/inspect.js), as of 20.x–26.x; differs: never calls Proxy traps or util.inspect.custom (only runtime-registered inspectors)
  function formatValue(st, value, level, fromTypedArray) {
    if (typeof value !== 'object' && typeof value !== 'function') {
      return formatPrimitive(st.paint, value, st);
    }
    if (value === null) return st.paint('null', 'null');

    let kind = nTypeTag(value);
    let proxies = 0;  // Node 26+: how many "Proxy(...)" wrap the target's text
    if (kind === T_PROXY) {
      if (st.showProxy) return formatProxy(st, value, level);
      if (nodeMajor >= 26) {
        do {
          value = nProxyTarget(value);
          if (value === null) return wrapInProxy(st, st.paint('<Revoked Proxy>', 'special'), proxies);
          proxies++;
        } while (nTypeTag(value) === T_PROXY);
      } else {
        value = unwrapProxy(value);
        if (value === null) return st.paint('<Revoked Proxy>', 'special');
      }
      kind = nTypeTag(value);
    }

    if (customInspectors !== undefined) {
      const hook = findCustomInspector(value);
      if (hook !== undefined) {
        const result = ReflectApply(hook, value, [st.depth - level, getUserOptions(st), inspectForHooks]);
        if (result !== value) {
          if (typeof result === 'string') {
            return replaceNewlines(result, `\n${StringPrototypeRepeat(' ', st.indent)}`);
          }
          return formatValue(st, result, level, false);
        }
      }
    }

    if (listIncludes(st.stack, value)) {
      return st.paint(`[Circular *${referenceNumber(st, value)}]`, 'special');
    }
    const text = formatRaw(st, value, level, fromTypedArray, kind);
    return proxies === 0 ? text : wrapInProxy(st, text, proxies);
  }

  function wrapInProxy(st, text, times) {
    for (let i = 0; i < times; i++) text = `${st.paint('Proxy(', 'special')}${text}${st.paint(')', 'special')}`;
    return text;
  }

  // Reference numbers are handed out in the order cycles are discovered.
  function referenceNumber(st, value) {
    if (st.refs === undefined) st.refs = new MapCtor();
    let id = MapPrototypeGet(st.refs, value);
    if (id === undefined) {
      id = MapPrototypeGetSize(st.refs) + 1;
      MapPrototypeSet(st.refs, value, id);
    }
    return id;
  }

  // showProxy: `Proxy [ target, handler ]`.
  // Node's formatProxy (lib/internal/util/inspect.js), as of 20.x–26.x; differs: never runs traps
  function formatProxy(st, proxy, level) {
    const target = nProxyTarget(proxy);
    if (target === null) return st.paint('<Revoked Proxy>', 'special');
    const handler = nProxyHandler(proxy);
    if (level > st.depth) return st.paint('Proxy [Array]', 'special');
    st.indent += 2;
    const parts = newList();
    push(parts, formatValue(st, target, level + 1, false));
    push(parts, formatValue(st, handler, level + 1, false));
    st.indent -= 2;
    return reduceToSingleString(st, parts, '', 'Proxy [', ']', AS_ARRAY_EXTRAS, level + 1, undefined);
  }

  // The label before an object's brace: "Foo ", "Foo [tag] ", "Foo(3) ",
  // "[Foo(3): null prototype] [tag] ".
  // Node's getPrefix (lib/internal/util/inspect.js), as of 20.x–26.x; the tag rule of each (22 and 24 changed it)
  function getPrefix(ctor, tag, fallback, size) {
    if (size === undefined) size = '';
    if (ctor === null) {
      const nullLabel = `[${fallback}${size}: null prototype] `;
      return tag !== '' && tag !== fallback ? `${nullLabel}[${tag}] ` : nullLabel;
    }
    if (tag === '') return `${ctor}${size} `;
    if (nodeMajor >= 24) {
      // A tag whose last dotted segment is the constructor's name replaces it.
      const dot = StringPrototypeLastIndexOf(tag, '.');
      if (ctor === (dot >= 1 ? StringPrototypeSlice(tag, dot + 1) : tag)) return `${tag}${size} `;
      return `${ctor}${size} [${tag}] `;
    }
    if (nodeMajor >= 22) {
      // Not shown when the constructor's name contains it, unless a lower
      // case character (or a non-letter) follows it there: "MyMap", "MapX".
      const at = StringPrototypeIndexOf(ctor, tag);
      if (at === -1) return `${ctor}${size} [${tag}] `;
      const end = at + tag.length;
      if (end !== ctor.length) {
        const next = ctor[end];
        if (next === StringPrototypeToLowerCase(next)) return `${ctor}${size} [${tag}] `;
      }
      return `${ctor}${size} `;
    }
    return tag !== ctor ? `${ctor}${size} [${tag}] ` : `${ctor}${size} `;
  }

  // getPrefix() for an object of no special kind.
  function genericLabel(value, ctor, tag) {
    if (ctor !== null) return getPrefix(ctor, tag, '');
    const internal = nConstructorName(value);
    return getPrefix(ctor, tag, internal === tag ? 'Object' : internal);
  }

  // The name of the nearest constructor on the prototype chain that `value`
  // is an instance of (own `constructor` first); null for a null-prototype
  // object; for a chain without constructors, V8's name plus the first
  // prototype's description. With showHidden, user-defined prototype
  // properties are collected into `protoLines`.
  // Node's getConstructorName (lib/internal/util/inspect.js), as of 20.x–26.x; differs: `constructor` and its `name` read as data properties only (no getters), no Symbol.hasInstance
  function getConstructorName(st, value, level, protoLines) {
    let firstProto;
    let o = value;
    while (o !== null) {
      if (o !== value && (o === ObjectPrototype || o === FunctionPrototype)) {
        if (protoLines !== undefined && o !== firstProto) {
          addPrototypeProperties(st, value, firstProto || value, level, protoLines);
        }
        return o === ObjectPrototype ? 'Object' : 'Function';
      }
      const d = ObjectGetOwnPropertyDescriptor(o, 'constructor');
      if (d !== undefined && isDataDescriptor(d) && typeof d.value === 'function') {
        const C = d.value;
        const name = constructorFunctionName(C, value);
        if (name !== '' && isInstanceof(value, C, o)) {
          if (protoLines !== undefined && (o !== firstProto || !isBuiltinName(name))) {
            addPrototypeProperties(st, value, firstProto || value, level, protoLines);
          }
          return toStr(name);
        }
      }
      o = protoOf(o);
      if (firstProto === undefined) firstProto = o;
    }
    if (firstProto === null) return null;

    const internal = nConstructorName(value);
    if (level > st.depth) return `${internal} <Complex prototype>`;
    const protoName = getConstructorName(st, firstProto, level + 1, protoLines);
    if (protoName !== null) return `${internal} <${protoName}>`;
    const brief = copyOptions(st);
    brief.depth = -1;
    return `${internal} <${inspectWithOptions(firstProto, brief)}>`;
  }

  // showHidden: non-method properties of up to three user-defined prototype
  // levels (stopping at a built-in constructor's prototype), each key once.
  // Node's addPrototypeProperties (lib/internal/util/inspect.js), as of 20.x–26.x; differs: data properties only, no getters
  function addPrototypeProperties(st, main, start, level, into) {
    const shown = newList();
    let o = start;
    for (let layer = 0; layer < 3; layer++) {
      if (layer !== 0 || main === o) {
        o = protoOf(o);
        if (o === null) return;
        const d = ObjectGetOwnPropertyDescriptor(o, 'constructor');
        if (d !== undefined && isDataDescriptor(d) && typeof d.value === 'function' &&
            isBuiltinName(functionName(d.value))) {
          return;
        }
      }
      const keys = ReflectOwnKeys(o);
      const seenBefore = shown.length;
      push(st.stack, main);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (key === 'constructor' || ObjectPrototypeHasOwnProperty(main, key)) continue;
        let repeated = false;
        for (let k = 0; k < seenBefore; k++) {
          if (shown[k] === key) {
            repeated = true;
            break;
          }
        }
        if (repeated) continue;
        const d = ObjectGetOwnPropertyDescriptor(o, key);
        if (isDataDescriptor(d) && typeof d.value === 'function') continue;
        const line = formatProperty(st, o, level, key, AS_PROPERTIES, d, main);
        push(into, st.colors ? `\u001b[2m${line}\u001b[22m` : line);
      }
      st.stack.length--;
      for (let i = 0; i < keys.length; i++) push(shown, keys[i]);
    }
  }

  function listIncludes(list, v) {
    for (let i = 0; i < list.length; i++) if (list[i] === v) return true;
    return false;
  }
  function listIndexOf(list, v) {
    for (let i = 0; i < list.length; i++) if (list[i] === v) return i;
    return -1;
  }
  function listRemoveAt(list, index) {
    for (let i = index + 1; i < list.length; i++) list[i - 1] = list[i];
    list.length--;
  }
  function copyToList(src) {
    const out = newList();
    for (let i = 0; i < src.length; i++) push(out, src[i]);
    return out;
  }

  // Symbol.toStringTag when it is a string that is not already shown as an
  // own enumerable property (own at all, with showHidden); '' otherwise.
  function tagOf(value, showHidden) {
    const tag = lookupData(value, SymbolToStringTag);
    if (typeof tag !== 'string' || tag === '') return '';
    const own = showHidden ?
      ObjectPrototypeHasOwnProperty(value, SymbolToStringTag) :
      ObjectPrototypePropertyIsEnumerable(value, SymbolToStringTag);
    return own ? '' : tag;
  }

  // Own enumerable string keys then own enumerable symbols (all own keys with
  // showHidden). The result may be an array we must not write to.
  // Node's getKeys (lib/internal/util/inspect.js), as of 20.x–26.x
  function getKeys(value, all) {
    const symbols = ObjectGetOwnPropertySymbols(value);
    const names = all ? ObjectGetOwnPropertyNames(value) : ObjectKeys(value);
    if (symbols.length === 0) return names;
    const keys = copyToList(names);
    for (let i = 0; i < symbols.length; i++) {
      if (all || ObjectPrototypePropertyIsEnumerable(value, symbols[i])) push(keys, symbols[i]);
    }
    return keys;
  }

  // Where an object's entries come from.
  const E_NONE = 0;
  const E_ARRAY = 1;
  const E_SET = 2;
  const E_MAP = 3;
  const E_TYPED_ARRAY = 4;
  const E_ITERATOR = 5;
  const E_BUFFER = 6;
  const E_PROMISE = 7;
  const E_WEAK_SET = 8;
  const E_WEAK_MAP = 9;
  const E_WEAK_HIDDEN = 10;
  const E_NAMESPACE = 11;
  // Extra entries shown before the own keys.
  const X_NONE = 0;
  const X_BYTE_LENGTH = 1;
  const X_DATA_VIEW = 2;

  function isFunctionKind(kind) {
    return kind >= T_FUNCTION && kind <= T_ASYNC_GENERATOR_FUNCTION;
  }

  // Node's formatRaw (lib/internal/util/inspect.js), as of 20.x–26.x; differs: reads data properties only (no Symbol.toStringTag or other getters; `getters` as Node)
  function formatRaw(st, value, level, fromTypedArray, kind) {
    let protoLines;
    if (st.showHidden && level <= st.depth) protoLines = newList();
    const ctor = getConstructorName(st, value, level, protoLines);
    if (protoLines !== undefined && protoLines.length === 0) protoLines = undefined;
    const tag = tagOf(value, st.showHidden);
    const bare = protoLines === undefined;  // nothing from prototypes to show

    let keys;
    let head = '';          // text before the braces (functions, errors, ...)
    let open = '{';
    let close = '}';
    let entries = E_NONE;
    let mode = AS_PROPERTIES;
    let extra = X_NONE;
    let count = 0;          // Map/Set size, typed array length
    let capped = true;      // Map/Set: maxArrayLength applies

    if (kind === T_ARRAY) {
      keys = nOwnNonIndexKeys(value, !st.showHidden);
      const length = value.length;
      open = ctor === 'Array' && tag === '' ? '[' : `${getPrefix(ctor, tag, 'Array', `(${length})`)}[`;
      close = ']';
      if (length === 0 && keys.length === 0 && bare) return `${open}]`;
      entries = E_ARRAY;
      mode = AS_ARRAY_EXTRAS;
    } else if (kind === T_SET || kind === T_MAP) {
      const isSet = kind === T_SET;
      count = isSet ? SetPrototypeGetSize(value) : MapPrototypeGetSize(value);
      const label = getPrefix(ctor, tag, isSet ? 'Set' : 'Map', `(${count})`);
      keys = getKeys(value, st.showHidden);
      if (count === 0 && keys.length === 0 && bare) return `${label}{}`;
      open = `${label}{`;
      entries = isSet ? E_SET : E_MAP;
      // Node iterates a null-prototype Map/Set without a size, i.e. fully.
      capped = ctor !== null;
    } else if (kind === T_TYPED_ARRAY) {
      keys = nOwnNonIndexKeys(value, !st.showHidden);
      count = TypedArrayPrototypeGetLength(value);
      const fallback = ctor === null ? TypedArrayPrototypeGetSymbolToStringTag(value) : '';
      open = `${getPrefix(ctor, tag, fallback, `(${count})`)}[`;
      close = ']';
      // (Node reads `length`, which a null-prototype typed array lacks.)
      if (ctor !== null && count === 0 && keys.length === 0 && !st.showHidden) return `${open}]`;
      entries = E_TYPED_ARRAY;
      mode = AS_ARRAY_EXTRAS;
    } else if (kind === T_MAP_ITERATOR || kind === T_SET_ITERATOR) {
      keys = getKeys(value, st.showHidden);
      const own = kind === T_MAP_ITERATOR ? 'Map Iterator' : 'Set Iterator';
      open = `[${tag === own ? own : tag === '' ? own : `${tag}] [${own}`}] {`;
      entries = E_ITERATOR;
    } else {
      keys = getKeys(value, st.showHidden);
      const none = keys.length === 0 && bare;
      if (isFunctionKind(kind)) {
        head = getFunctionBase(st, value, ctor, tag, kind);
        if (none) return st.paint(head, 'special');
      } else if (ctor === 'Object') {
        if (kind === T_ARGUMENTS) open = '[Arguments] {';
        else if (tag !== '') open = `${getPrefix(ctor, tag, 'Object')}{`;
        if (none) return `${open}}`;
      } else if (kind === T_REGEXP) {
        head = regExpToString(value);
        const label = getPrefix(ctor, tag, 'RegExp');
        if (label !== 'RegExp ') head = label + head;
        if (nodeMajor >= 26) {
          // Node 26+ styles the regexp also when its properties follow.
          head = st.paint(head, 'regexp');
          if (none || level > st.depth) return head;
        } else if (none || level > st.depth) {
          return st.paint(head, 'regexp');
        }
      } else if (kind === T_DATE) {
        head = NumberIsNaN(DatePrototypeGetTime(value)) ?
          DatePrototypeToString(value) : DatePrototypeToISOString(value);
        const label = getPrefix(ctor, tag, 'Date');
        if (label !== 'Date ') head = label + head;
        if (none) return st.paint(head, 'date');
      } else if (kind === T_ERROR || isErrorValue(value)) {
        keys = copyToList(keys);
        head = formatError(value, ctor, tag, st, keys);
        if (keys.length === 0 && bare) return head;
      } else if (kind === T_ARRAY_BUFFER || kind === T_SHARED_ARRAY_BUFFER) {
        const label = getPrefix(ctor, tag, kind === T_ARRAY_BUFFER ? 'ArrayBuffer' : 'SharedArrayBuffer');
        if (fromTypedArray && none) {
          const key = nodeMajor >= 22 ? '[byteLength]' : 'byteLength';
          return `${label}{ ${key}: ${formatNumber(st.paint, bufferByteLength(value, kind), false)} }`;
        }
        if (!fromTypedArray) entries = E_BUFFER;
        open = `${label}{`;
        extra = X_BYTE_LENGTH;
      } else if (kind === T_DATA_VIEW) {
        open = `${getPrefix(ctor, tag, 'DataView')}{`;
        extra = X_DATA_VIEW;
      } else if (kind === T_PROMISE) {
        open = `${getPrefix(ctor, tag, 'Promise')}{`;
        entries = E_PROMISE;
      } else if (kind === T_WEAK_SET || kind === T_WEAK_MAP) {
        const isSet = kind === T_WEAK_SET;
        open = `${getPrefix(ctor, tag, isSet ? 'WeakSet' : 'WeakMap')}{`;
        entries = !st.showHidden ? E_WEAK_HIDDEN : isSet ? E_WEAK_SET : E_WEAK_MAP;
      } else if (kind === T_MODULE_NAMESPACE) {
        open = `${getPrefix(ctor, tag, 'Module')}{`;
        entries = E_NAMESPACE;
      } else if (kind >= T_NUMBER_OBJECT && kind <= T_SYMBOL_OBJECT) {
        if (kind === T_STRING_OBJECT) keys = copyToList(keys);
        head = getBoxedBase(value, st, keys, ctor, tag, kind);
        if (keys.length === 0 && bare) return head;
      } else {
        const label = genericLabel(value, ctor, tag);
        if (none) return `${label}{}`;
        open = `${label}{`;
      }
    }

    if (level > st.depth) {
      const label = StringPrototypeSlice(genericLabel(value, ctor, tag), 0, -1);
      return st.paint(ctor === null ? label : `[${label}]`, 'special');
    }
    level += 1;

    push(st.stack, value);
    st.innermost = level;
    const savedIndent = st.indent;
    let parts;
    try {
      switch (entries) {
        case E_ARRAY: parts = formatArray(st, value, level); break;
        case E_SET: parts = formatSet(st, value, level, capped ? count : NaN); break;
        case E_MAP: parts = formatMap(st, value, level, capped ? count : NaN); break;
        case E_TYPED_ARRAY: parts = formatTypedArray(st, value, count, level); break;
        case E_ITERATOR: {
          const preview = nPreviewEntries(value);
          if (preview[1]) {
            if (StringPrototypeEndsWith(open, ' Iterator] {')) {
              open = `${StringPrototypeSlice(open, 0, -12)} Entries] {`;
            }
            parts = formatMapIterInner(st, level, preview[0], false);
          } else {
            parts = formatSetIterInner(st, level, preview[0], false);
          }
          break;
        }
        case E_BUFFER: parts = formatArrayBuffer(st, value); break;
        case E_PROMISE: parts = formatPromise(st, value, level); break;
        case E_WEAK_SET: parts = formatSetIterInner(st, level, nPreviewEntries(value)[0], true); break;
        case E_WEAK_MAP: parts = formatMapIterInner(st, level, nPreviewEntries(value)[0], true); break;
        case E_WEAK_HIDDEN:
          parts = newList();
          push(parts, st.paint('<items unknown>', 'special'));
          break;
        case E_NAMESPACE:
          parts = formatNamespaceObject(st, value, level, keys);
          keys = newList();
          break;
        default:
          parts = newList();
          break;
      }
      if (extra !== X_NONE && nodeMajor >= 22) {
        // Node 22+: "[byteLength]: 2", the key styled as a string.
        if (extra === X_BYTE_LENGTH) {
          push(parts, extraProperty(st, 'byteLength', bufferByteLength(value, kind), level, fromTypedArray));
        } else {
          push(parts, extraProperty(st, 'byteLength', dataViewField(st, value, 'byteLength'), level, fromTypedArray));
          push(parts, extraProperty(st, 'byteOffset', dataViewField(st, value, 'byteOffset'), level, fromTypedArray));
          push(parts, extraProperty(st, 'buffer', DataViewPrototypeGetBuffer(value), level, fromTypedArray));
        }
      } else if (extra === X_BYTE_LENGTH) {
        push(parts, formatProperty(st, value, level, 'byteLength', AS_PROPERTIES,
          { value: bufferByteLength(value, kind), enumerable: true }));
      } else if (extra === X_DATA_VIEW) {
        push(parts, formatProperty(st, value, level, 'byteLength', AS_PROPERTIES,
          { value: DataViewPrototypeGetByteLength(value), enumerable: true }));
        push(parts, formatProperty(st, value, level, 'byteOffset', AS_PROPERTIES,
          { value: DataViewPrototypeGetByteOffset(value), enumerable: true }));
        push(parts, formatProperty(st, value, level, 'buffer', AS_PROPERTIES,
          { value: DataViewPrototypeGetBuffer(value), enumerable: true }));
      }
      for (let i = 0; i < keys.length; i++) {
        push(parts, formatProperty(st, value, level, keys[i], mode));
      }
      if (protoLines !== undefined) {
        for (let i = 0; i < protoLines.length; i++) push(parts, protoLines[i]);
      }
    } catch (err) {
      if (!isStackOverflowError(err)) throw err;
      st.stack.length--;
      st.indent = savedIndent;
      const label = StringPrototypeSlice(genericLabel(value, ctor, tag), 0, -1);
      return st.paint(`[${label}: Inspection interrupted prematurely. Maximum call stack size exceeded.]`, 'special');
    }

    if (st.refs !== undefined) {
      const id = MapPrototypeGet(st.refs, value);
      if (id !== undefined) {
        const ref = st.paint(`<ref *${id}>`, 'special');
        if (st.compact === true) open = `${ref} ${open}`;
        else head = head === '' ? ref : `${ref} ${head}`;
      }
    }
    st.stack.length--;

    if (st.sorted) sortParts(st, parts, mode === AS_PROPERTIES ? parts.length : keys.length);

    const text = reduceToSingleString(st, parts, head, open, close, mode, level, value);
    // Like Node: once the output at one indentation grows past 2 ** 27
    // characters, stop descending into objects.
    const total = (st.sizes[st.indent] || 0) + text.length;
    st.sizes[st.indent] = total;
    if (total > 2 ** 27) st.depth = -1;
    return text;
  }

  // Sort the last `n` parts (only when there are at least two of them for
  // array-likes, whose elements keep their order).
  function sortParts(st, parts, n) {
    const compare = st.sorted === true ? undefined : st.sorted;
    if (n === parts.length) {
      ArrayPrototypeSort(parts, compare);
      return;
    }
    if (n < 2) return;
    const from = parts.length - n;
    const tail = newList();
    for (let i = from; i < parts.length; i++) push(tail, parts[i]);
    ArrayPrototypeSort(tail, compare);
    for (let i = 0; i < tail.length; i++) parts[from + i] = tail[i];
  }

  let stackOverflowMessage;
  // Node's isStackOverflowError (lib/internal/errors.js), as of 20.x–26.x
  function isStackOverflowError(err) {
    if (!isObjectLike(err) || nTypeTag(err) !== T_ERROR || protoOf(err) !== RangeErrorPrototype) {
      return false;
    }
    if (stackOverflowMessage === undefined) {
      try {
        const recurse = function recurse() { recurse(); };
        recurse();
      } catch (e) {
        stackOverflowMessage = lookupData(e, 'message');
      }
    }
    return lookupData(err, 'message') === stackOverflowMessage;
  }

  // Node 22+'s hidden-style entries of array buffers, data views and (with
  // showHidden) typed arrays: "[byteLength]: 2".
  function extraProperty(st, key, v, level, fromTypedArray) {
    st.indent += 2;
    const text = formatValue(st, v, level, fromTypedArray);
    st.indent -= 2;
    return `${st.paint(`[${key}]`, 'string')}: ${text}`;
  }

  // A DataView's byteLength/byteOffset; for a detached one (whose getters
  // throw) Node 22+ shows its buffer's property of that name instead.
  function dataViewField(st, view, key) {
    try {
      return key === 'byteLength' ? DataViewPrototypeGetByteLength(view) : DataViewPrototypeGetByteOffset(view);
    } catch (err) {
      if (nodeMajor < 22) throw err;
      // Node 22 and 24 read the getter after indenting and never undo that
      // indentation when it throws: the rest of the output is 2 deeper.
      if (nodeMajor < 26) st.indent += 2;
      const buffer = DataViewPrototypeGetBuffer(view);
      if (key !== 'byteLength') return lookupData(buffer, key);
      return nTypeTag(buffer) === T_ARRAY_BUFFER ?
        ArrayBufferPrototypeGetByteLength(buffer) : nSharedByteLength(buffer);
    }
  }

  function bufferByteLength(value, kind) {
    return kind === T_ARRAY_BUFFER ?
      ArrayBufferPrototypeGetByteLength(value) :
      nSharedByteLength(value);
  }

  function regExpToString(re) {
    let flags = '';
    for (let i = 0; i < regExpFlagGetters.length; i += 2) {
      if (regExpFlagGetters[i + 1](re)) flags += regExpFlagGetters[i];
    }
    return `/${RegExpPrototypeGetSource(re)}/${flags}`;
  }

  // "[Number: 3]", "[String (MyString): 'x'] [tag]", "[Boolean (null prototype): true]"
  // Node's getBoxedBase (lib/internal/util/inspect.js), as of 20.x–26.x
  function getBoxedBase(value, st, keys, ctor, tag, kind) {
    let type;
    let inner;
    if (kind === T_NUMBER_OBJECT) {
      type = 'Number';
      inner = NumberPrototypeValueOf(value);
    } else if (kind === T_STRING_OBJECT) {
      type = 'String';
      inner = StringPrototypeValueOf(value);
      // The index keys of a String object are its characters: not listed.
      const drop = MathMin(inner.length, keys.length);
      for (let i = drop; i < keys.length; i++) keys[i - drop] = keys[i];
      keys.length -= drop;
    } else if (kind === T_BOOLEAN_OBJECT) {
      type = 'Boolean';
      inner = BooleanPrototypeValueOf(value);
    } else if (kind === T_BIGINT_OBJECT) {
      type = 'BigInt';
      inner = BigIntPrototypeValueOf(value);
    } else {
      type = 'Symbol';
      inner = SymbolPrototypeValueOf(value);
    }
    let text = `[${type}`;
    if (ctor === null) text += ' (null prototype)';
    else if (ctor !== type) text += ` (${ctor})`;
    text += `: ${formatPrimitive(stylizeNoColor, inner, st)}]`;
    if (tag !== '' && tag !== ctor) text += ` [${tag}]`;
    if (keys.length !== 0 || st.paint === stylizeNoColor) return text;
    return st.paint(text, StringPrototypeToLowerCase(type));
  }

  // `${name}` as Node writes a function name (a symbol name throws, as in Node).
  function nameToString(name) {
    return safeToString(name);
  }

  // "[class A]", "[class B extends A]", "[class C [Foo] [tag]]",
  // "[class D extends [null prototype]]"
  // Node's getClassBase (lib/internal/util/inspect.js), as of 20.x–26.x; differs: no getters
  function getClassBase(value, ctor, tag) {
    const ownName = ObjectPrototypeHasOwnProperty(value, 'name') && lookupData(value, 'name');
    let text = `class ${nameToString(ownName || '(anonymous)')}`;
    if (ctor !== 'Function' && ctor !== null) text += ` [${ctor}]`;
    if (tag !== '' && ctor !== tag) text += ` [${tag}]`;
    if (ctor === null) {
      text += ' extends [null prototype]';
    } else {
      const parent = protoOf(value);
      const parentName = parent === null ? undefined : lookupData(parent, 'name');
      if (parentName) text += ` extends ${nameToString(parentName)}`;
    }
    return `[${text}]`;
  }

  // Remove // comments (through their '\n') and /* */ comments, with the
  // same reach as the pattern Node uses (a comment never spans \r, U+2028 or
  // U+2029).
  function stripComments(s) {
    let out = '';
    let from = 0;
    let i = 0;
    const n = s.length;
    while (i < n - 1) {
      if (StringPrototypeCharCodeAt(s, i) !== 47) {
        i++;
        continue;
      }
      const next = StringPrototypeCharCodeAt(s, i + 1);
      let end = -1;
      if (next === 47) {
        for (let j = i + 2; j < n; j++) {
          const c = StringPrototypeCharCodeAt(s, j);
          if (c === 10) {
            end = j + 1;
            break;
          }
          if (c === 13 || c === 0x2028 || c === 0x2029) break;
        }
      } else if (next === 42) {
        for (let j = i + 2; j < n - 1; j++) {
          const c = StringPrototypeCharCodeAt(s, j);
          if (c === 42 && StringPrototypeCharCodeAt(s, j + 1) === 47) {
            end = j + 2;
            break;
          }
          if (c === 13 || c === 0x2028 || c === 0x2029) break;
        }
      }
      if (end === -1) {
        i++;
        continue;
      }
      out += StringPrototypeSlice(s, from, i);
      from = end;
      i = end;
    }
    return out + StringPrototypeSlice(s, from);
  }

  function isSpaceCode(c) {
    return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f ||
      c === 0x205f || c === 0x3000 || c === 0xfeff;
  }

  // Is this function's source a class? "class" ... "}" whose header (before
  // the first "{") has no "(" -- or, with comments removed, starts with
  // white space and has its first "{" before its first "(".
  function looksLikeClass(source) {
    if (!StringPrototypeStartsWith(source, 'class') || !StringPrototypeEndsWith(source, '}')) return false;
    const body = StringPrototypeSlice(source, 5, -1);
    const brace = StringPrototypeIndexOf(body, '{');
    if (brace === -1) return false;
    if (!StringPrototypeIncludes(StringPrototypeSlice(body, 0, brace), '(')) return true;
    const plain = stripComments(body);
    if (plain.length === 0 || !isSpaceCode(StringPrototypeCharCodeAt(plain, 0))) return false;
    const b = StringPrototypeIndexOf(plain, '{');
    const p = StringPrototypeIndexOf(plain, '(');
    return b !== -1 && (p === -1 || b < p);
  }

  // "[Function: f]", "[AsyncGeneratorFunction (anonymous)] Foo [tag]", ...
  // Node's getFunctionBase (lib/internal/util/inspect.js), as of 20.x–26.x; differs: source read with the captured Function.prototype.toString
  function getFunctionBase(st, value, ctor, tag, kind) {
    if (looksLikeClass(FunctionPrototypeToString(value))) return getClassBase(value, ctor, tag);
    const isAsync = kind === T_ASYNC_FUNCTION || kind === T_ASYNC_GENERATOR_FUNCTION;
    const isGenerator = kind === T_GENERATOR_FUNCTION || kind === T_ASYNC_GENERATOR_FUNCTION;
    const type = `${isAsync ? 'Async' : ''}${isGenerator ? 'Generator' : ''}Function`;
    const name = lookupData(value, 'name');
    let text = `[${type}${ctor === null ? ' (null prototype)' : ''}`;
    if (name === '') {
      text += ' (anonymous)]';
    } else if (nodeMajor >= 22 && typeof name !== 'string') {
      // Node 22+ inspects a name that is not a string (without a depth).
      text += `: ${formatValue(st, name, NaN, false)}]`;
    } else {
      text += `: ${nameToString(name)}]`;
    }
    if (ctor !== type && ctor !== null) text += ` ${ctor}`;
    if (tag !== '' && ctor !== tag) text += ` [${tag}]`;
    return text;
  }

  // ---- Errors ----

  // Error.prototype.toString, reading name and message without getters.
  function errorToString(err) {
    const name = lookupData(err, 'name');
    const message = lookupData(err, 'message');
    // (ToString throws for a symbol, as in Error.prototype.toString.)
    const n = name === undefined ? 'Error' : safeToString(name);
    const m = message === undefined ? '' : safeToString(message);
    if (n === '') return m;
    if (m === '') return n;
    return `${n}: ${m}`;
  }

  // Node's getStackString (lib/internal/util/inspect.js), as of 20.x–26.x
  function getStackString(st, err) {
    if (nodeMajor < 22) {
      const stack = getWithAccessors(err, 'stack');
      return stack ? toStr(stack) : errorToString(err);
    }
    // Node 22+: a throwing `stack` accessor counts as no stack; a stack that
    // is not a string is inspected below the error's summary line (without
    // a depth, as Node does it).
    let stack;
    try {
      stack = getWithAccessors(err, 'stack');
    } catch {
      stack = undefined;
    }
    if (!stack) return errorToString(err);
    if (typeof stack === 'string') return stack;
    push(st.stack, err);
    st.indent += 4;
    const text = formatValue(st, stack, NaN, false);
    st.indent -= 4;
    st.stack.length--;
    return `${errorToString(err)}\n    ${text}`;
  }

  // The first run of more than three consecutive lines of `a` that also
  // appears consecutively in `b`: { len, offset } (offset in `a`).
  // Node's identicalSequenceRange (lib/internal/util/inspect.js), as of 20.x–26.x
  function identicalSequenceRange(a, b) {
    for (let i = 0; i < a.length - 3; i++) {
      const at = listIndexOf(b, a[i]);
      if (at === -1) continue;
      const room = b.length - at;
      if (room <= 3) continue;
      const limit = MathMin(a.length - i, room);
      let len = 1;
      while (len < limit && a[i + len] === b[at + len]) len++;
      if (len > 3) return { len, offset: i };
    }
    return { len: 0, offset: 0 };
  }

  // The frame lines of a stack; frames shared with the cause's stack are
  // folded into "... N lines matching cause stack trace ...".
  // Node's getStackFrames (lib/internal/util/inspect.js), as of 20.x–26.x; differs: no node_modules/cwd marking (there is no cwd)
  function getStackFrames(st, err, frames) {
    const lines = splitString(frames, '\n');
    const out = foldCauseFrames(st, err, lines);
    return nodeMajor >= 22 && out.length > 10 ? collapseRepeatedFrames(st, out) : out;
  }

  function foldCauseFrames(st, err, lines) {
    let cause = lookupData(err, 'cause');
    if (cause == null || !isErrorValue(cause)) return lines;
    cause = unwrapProxy(cause);
    const causeStack = getStackString(st, cause);
    const at = StringPrototypeIndexOf(causeStack, '\n    at');
    if (at === -1) return lines;
    const shared = identicalSequenceRange(lines, splitString(StringPrototypeSlice(causeStack, at + 1), '\n'));
    if (shared.len === 0) return lines;
    const folded = shared.len - 2;
    const out = newList();
    for (let i = 0; i <= shared.offset; i++) push(out, lines[i]);
    push(out, st.paint(`    ... ${folded} lines matching cause stack trace ...`, 'undefined'));
    for (let i = shared.offset + 1 + folded; i < lines.length; i++) push(out, lines[i]);
    return out;
  }

  // Node 22+: runs of repeated frames in a long stack (recursion) are
  // replaced by "... collapsed N duplicate lines matching above ...".
  function collapseRepeatedFrames(st, frames) {
    const ranges = getDuplicateErrorFrameRanges(frames);
    for (let r = ranges.length - 3; r >= 0; r -= 3) {
      const offset = ranges[r];
      const length = ranges[r + 1];
      const times = ranges[r + 2];
      const what = times > 1 ? `${length} lines ${times} times...` : 'lines ...';
      const marker = st.paint(`    ... collapsed ${length * times} duplicate lines matching above ${what}`, 'undefined');
      const out = newList();
      for (let i = 0; i < offset; i++) push(out, frames[i]);
      push(out, marker);
      for (let i = offset + length * times; i < frames.length; i++) push(out, frames[i]);
      frames = out;
    }
    return frames;
  }

  // [offset, length, times, ...]: at `offset` a block of `length` frames
  // repeats the block before it `times` times (Node's search: candidate
  // periods from the gcd of the distances between equal lines, keeping the
  // one hiding the most frames).
  // Node's getDuplicateErrorFrameRanges (lib/internal/util/inspect.js), as of 22.x–26.x
  function getDuplicateErrorFrameRanges(frames) {
    const result = newList();
    const positions = new MapCtor();
    for (let i = 0; i < frames.length; i++) {
      const list = MapPrototypeGet(positions, frames[i]);
      if (list === undefined) {
        const fresh = newList();
        push(fresh, i);
        MapPrototypeSet(positions, frames[i], fresh);
      } else {
        push(list, i);
      }
    }
    const minimum = 3;
    if (frames.length - MapPrototypeGetSize(positions) <= minimum) return result;
    for (let i = 0; i < frames.length - minimum; i++) {
      const at = MapPrototypeGet(positions, frames[i]);
      if (at.length === 1 || at[at.length - 1] === i) continue;
      const current = listIndexOf(at, i) + 1;
      if (current === at.length) continue;
      let range = at[at.length - 1] - i;
      if (range < minimum) continue;
      let steps;  // other candidate periods, in the order found
      if (current + 1 < at.length) {
        let gcd = 0;
        for (let j = current; j < at.length; j++) {
          let distance = at[j] - i;
          while (distance !== 0) {
            const remainder = gcd % distance;
            if (gcd !== 0) {
              if (steps === undefined) steps = newList();
              if (!listIncludes(steps, gcd)) push(steps, gcd);
            }
            gcd = distance;
            distance = remainder;
          }
          if (gcd === 1) break;
        }
        range = gcd;
        if (steps !== undefined) {
          const k = listIndexOf(steps, range);
          if (k !== -1) listRemoveAt(steps, k);
        }
      }
      let bestRange = range;
      let bestTimes = 0;
      let times = 0;
      for (let next = i + range; ; next += range) {
        let equal = 0;
        for (let j = 0; j < range; j++) {
          if (frames[i + j] !== frames[next + j]) break;
          equal++;
        }
        if (equal !== range) {
          if (steps === undefined || steps.length === 0) break;
          if (times !== 0 && bestRange * bestTimes < range * times) {
            bestRange = range;
            bestTimes = times;
          }
          range = steps[steps.length - 1];
          steps.length--;
          next = i;
          times = 0;
          continue;
        }
        times++;
      }
      if (bestTimes !== 0 && bestRange * bestTimes >= range * times) {
        range = bestRange;
        times = bestTimes;
      }
      if (times * range >= 3) {
        push(result, i + range);
        push(result, range);
        push(result, times);
        i += range * (times + 1) - 1;
      }
    }
    return result;
  }

  function isUpperCode(c) {
    return c >= 65 && c <= 90;
  }
  // Characters of an error name at the start of a stack: [a-z_ A-Z0-9[\]()-]
  function isStackNameCode(c) {
    return isAlnumCode(c) || c === 95 || c === 32 || c === 91 || c === 93 ||
      c === 40 || c === 41 || c === 45;
  }
  // The error name a stack starts with, for errors without a prototype:
  // "Name: ...", "Name\n    at ...", or a stack that is just "...Error".
  function leadingErrorName(stack) {
    if (stack.length > 1 && isUpperCode(StringPrototypeCharCodeAt(stack, 0))) {
      let i = 1;
      while (i < stack.length && isStackNameCode(StringPrototypeCharCodeAt(stack, i))) i++;
      if (i > 1 && (codeAt(stack, i) === 58 || StringPrototypeStartsWith(stack, '\n    at', i))) {
        return StringPrototypeSlice(stack, 0, i);
      }
    }
    if (StringPrototypeEndsWith(stack, 'Error')) {
      for (let i = 0; i < stack.length; i++) {
        const c = StringPrototypeCharCodeAt(stack, i);
        if (!isAlnumCode(c) && c !== 95 && c !== 45) return '';
      }
      return stack;
    }
    return '';
  }

  // Make the first line name the constructor when it differs from the
  // error's name: "B [ToolCallError]: nope", "[Error: null prototype]: x".
  // Node's improveStack (lib/internal/util/inspect.js), as of 20.x–26.x
  function improveStack(stack, ctor, name, tag) {
    let nameLength = name.length;
    if (ctor !== null) {
      if (!StringPrototypeEndsWith(name, 'Error') || !StringPrototypeStartsWith(stack, name)) return stack;
      const after = codeAt(stack, nameLength);
      if (after !== -1 && after !== 58 && after !== 10) return stack;
    }
    let fallback = 'Error';
    if (ctor === null) {
      const found = leadingErrorName(stack);
      nameLength = found.length;
      fallback = found || 'Error';
    }
    const label = StringPrototypeSlice(getPrefix(ctor, tag, fallback), 0, -1);
    if (name === label) return stack;
    if (!StringPrototypeIncludes(label, name)) {
      return `${label} [${name}]${StringPrototypeSlice(stack, nameLength)}`;
    }
    return nameLength === 0 ? `${label}: ${stack}` : label + StringPrototypeSlice(stack, nameLength);
  }

  // Own enumerable name/message/stack keys are not listed when the stack
  // already shows their value.
  // Node's removeDuplicateErrorKeys (lib/internal/util/inspect.js), as of 20.x–26.x; differs: no getters
  function removeDuplicateErrorKeys(st, keys, err, stack) {
    if (st.showHidden || keys.length === 0) return;
    if (nodeMajor >= 22) {
      // Node 22+: `stack` is never listed; name and message when they are
      // not strings or the stack shows them.
      let at = listIndexOf(keys, 'stack');
      if (at !== -1) listRemoveAt(keys, at);
      const candidates = ['message', 'name'];
      for (let k = 0; k < 2; k++) {
        at = listIndexOf(keys, candidates[k]);
        if (at === -1) continue;
        const v = lookupData(err, candidates[k]);
        if (typeof v !== 'string' || StringPrototypeIncludes(stack, v)) listRemoveAt(keys, at);
      }
      return;
    }
    const candidates = ['name', 'message', 'stack'];
    for (let k = 0; k < 3; k++) {
      const at = listIndexOf(keys, candidates[k]);
      if (at !== -1 && StringPrototypeIncludes(stack, safeToString(lookupData(err, candidates[k])))) {
        listRemoveAt(keys, at);
      }
    }
  }

  // The head of an error: its stack (or "[Name: message]" when it has no
  // frames), relabelled, re-indented; `keys` gains `cause` and `errors`.
  // Node's formatError (lib/internal/util/inspect.js), as of 20.x–26.x; differs: name, message, cause and errors read without getters
  function formatError(err, ctor, tag, st, keys) {
    const nameValue = lookupData(err, 'name');
    let name = nameValue != null ? toStr(nameValue) : 'Error';
    let stack;
    if (nodeMajor >= 22) {
      // Node 22+ falls back to Object.prototype.toString when the summary
      // line cannot be built (a symbol name or message).
      try {
        stack = getStackString(st, err);
      } catch {
        return objectPrototypeToString(err);
      }
    } else {
      stack = getStackString(st, err);
    }
    removeDuplicateErrorKeys(st, keys, err, stack);
    const newer = nodeMajor >= 22;  // Node 22+ lists own `cause` / `errors` only
    if ((newer ? ObjectPrototypeHasOwnProperty(err, 'cause') : hasDataOrOwn(err, 'cause')) &&
        !listIncludes(keys, 'cause')) {
      push(keys, 'cause');
    }
    const errors = lookupData(err, 'errors');
    if (isObjectLike(errors) && isArrayValue(errors) && (!newer || ObjectPrototypeHasOwnProperty(err, 'errors')) &&
        !listIncludes(keys, 'errors')) {
      push(keys, 'errors');
    }

    if (nodeMajor >= 26) {
      // Node 26+ lists a SuppressedError's own `error` and `suppressed`.
      if (ObjectPrototypeHasOwnProperty(err, 'error') && !listIncludes(keys, 'error')) push(keys, 'error');
      if (ObjectPrototypeHasOwnProperty(err, 'suppressed') && !listIncludes(keys, 'suppressed')) push(keys, 'suppressed');
    }

    if (newer && nameValue != null && typeof nameValue !== 'string') {
      // Node 22+ marks a non-string name where the stack shows it, and then
      // only relabels null-prototype errors.
      const label = StringPrototypeSlice(getPrefix(ctor, tag, 'Error'), 0, -1);
      const at = StringPrototypeIndexOf(stack, name);
      if (at !== -1) {
        stack = `${StringPrototypeSlice(stack, 0, at)}${name} [${label}]${StringPrototypeSlice(stack, at + name.length)}`;
      }
      if (ctor !== null) name = undefined;
    }
    if (name !== undefined) stack = improveStack(stack, ctor, name, tag);

    // Frames start at the first "\n    at" after the message.
    const message = lookupData(err, 'message');
    let searchFrom = -1;
    if (typeof message === 'string' && message !== '') {
      const at = StringPrototypeIndexOf(stack, message);
      if (at > 0) searchFrom = at + message.length;
    }
    const framesAt = StringPrototypeIndexOf(stack, '\n    at', searchFrom);
    if (framesAt === -1) {
      stack = `[${stack}]`;
    } else {
      const lines = getStackFrames(st, err, StringPrototypeSlice(stack, framesAt + 1));
      stack = `${StringPrototypeSlice(stack, 0, framesAt)}\n${joinWith(lines, '\n')}`;
    }
    if (st.indent !== 0) stack = replaceNewlines(stack, `\n${StringPrototypeRepeat(' ', st.indent)}`);
    return stack;
  }

  function isArrayValue(v) {
    const t = nTypeTag(v);
    if (t === T_ARRAY) return true;
    if (t !== T_PROXY) return false;
    const target = unwrapProxy(v);
    return target !== null && nTypeTag(target) === T_ARRAY;
  }

  // ---- Entries ----

  function moreItems(n) {
    return `... ${n} more item${n > 1 ? 's' : ''}`;
  }
  function emptyItems(st, n) {
    return st.paint(`<${n} empty item${n > 1 ? 's' : ''}>`, 'undefined');
  }

  // Node's formatArray (lib/internal/util/inspect.js), as of 20.x–26.x
  function formatArray(st, arr, level) {
    const length = arr.length;
    const shown = MathMin(MathMax(0, st.maxArrayLength), length);
    const parts = newList();
    for (let i = 0; i < shown; i++) {
      const d = ObjectGetOwnPropertyDescriptor(arr, i);
      if (d === undefined) return formatSpecialArray(st, arr, level, shown, parts, i);
      push(parts, formatProperty(st, arr, level, i, AS_ELEMENTS, d));
    }
    if (length > shown) push(parts, moreItems(length - shown));
    return parts;
  }

  // An array with holes: walk its own keys from position `k` (the first
  // hole), printing runs of holes as "<n empty items>", until `limit` parts.
  // Node's formatSpecialArray (lib/internal/util/inspect.js), as of 20.x–26.x
  function formatSpecialArray(st, arr, level, limit, parts, k) {
    const keys = ObjectKeys(arr);
    let next = k;  // the index the next part stands for
    for (; k < keys.length && parts.length < limit; k++) {
      const key = keys[k];
      const index = +key;
      if (index > 2 ** 32 - 2) break;
      if (`${next}` !== key) {
        if (!isIndexSpelling(key)) break;
        push(parts, emptyItems(st, index - next));
        next = index;
        if (parts.length === limit) break;
      }
      push(parts, formatProperty(st, arr, level, key, AS_ELEMENTS));
      next++;
    }
    const rest = arr.length - next;
    if (parts.length !== limit) {
      if (rest > 0) push(parts, emptyItems(st, rest));
    } else if (rest > 0) {
      push(parts, moreItems(rest));
    }
    return parts;
  }

  // Node's formatArrayBuffer (lib/internal/util/inspect.js), as of 20.x–26.x
  function formatArrayBuffer(st, buffer) {
    const parts = newList();
    let bytes;
    try {
      bytes = new Uint8ArrayCtor(buffer);
    } catch {
      push(parts, st.paint('(detached)', 'special'));
      return parts;
    }
    const length = TypedArrayPrototypeGetLength(bytes);
    const shown = MathMax(0, MathMin(st.maxArrayLength, length));
    let hex = '';
    for (let i = 0; i < shown; i++) {
      hex += i === 0 ? '' : ' ';
      hex += StringPrototypeToLowerCase(hexByte(bytes[i]));
    }
    const rest = length - st.maxArrayLength;
    if (rest > 0) hex += ` ... ${rest} more byte${rest > 1 ? 's' : ''}`;
    push(parts, `${st.paint('[Uint8Contents]', 'special')}: <${hex}>`);
    return parts;
  }

  function bytesPerElement(kind) {
    switch (kind) {
      case 'Int8Array': case 'Uint8Array': case 'Uint8ClampedArray': return 1;
      case 'Int16Array': case 'Uint16Array': case 'Float16Array': return 2;
      case 'Int32Array': case 'Uint32Array': case 'Float32Array': return 4;
      default: return 8;
    }
  }

  // Node's formatTypedArray (lib/internal/util/inspect.js), as of 20.x–26.x; differs: fields read with captured %TypedArray% getters
  function formatTypedArray(st, arr, length, level) {
    const shown = MathMin(MathMax(0, st.maxArrayLength), length);
    const parts = newList();
    const kind = TypedArrayPrototypeGetSymbolToStringTag(arr);
    const bigint = kind === 'BigInt64Array' || kind === 'BigUint64Array';
    for (let i = 0; i < shown; i++) {
      push(parts, bigint ?
        formatBigInt(st.paint, arr[i], st.numericSeparator) :
        formatNumber(st.paint, arr[i], st.numericSeparator));
    }
    if (length > shown) push(parts, moreItems(length - shown));
    if (st.showHidden && nodeMajor >= 22) {
      push(parts, extraProperty(st, 'BYTES_PER_ELEMENT', bytesPerElement(kind), level, true));
      push(parts, extraProperty(st, 'length', length, level, true));
      push(parts, extraProperty(st, 'byteLength', TypedArrayPrototypeGetByteLength(arr), level, true));
      push(parts, extraProperty(st, 'byteOffset', TypedArrayPrototypeGetByteOffset(arr), level, true));
      push(parts, extraProperty(st, 'buffer', TypedArrayPrototypeGetBuffer(arr), level, true));
    } else if (st.showHidden) {
      st.indent += 2;
      push(parts, `[BYTES_PER_ELEMENT]: ${formatValue(st, bytesPerElement(kind), level, true)}`);
      push(parts, `[length]: ${formatValue(st, length, level, true)}`);
      push(parts, `[byteLength]: ${formatValue(st, TypedArrayPrototypeGetByteLength(arr), level, true)}`);
      push(parts, `[byteOffset]: ${formatValue(st, TypedArrayPrototypeGetByteOffset(arr), level, true)}`);
      push(parts, `[buffer]: ${formatValue(st, TypedArrayPrototypeGetBuffer(arr), level, true)}`);
      st.indent -= 2;
    }
    return parts;
  }

  // A Set's values / a Map's "key => value" entries; `size` NaN means all.
  // Node's formatSet (lib/internal/util/inspect.js), as of 20.x–26.x; differs: iterates with the captured Set iterator (program replacements are not seen)
  function formatSet(st, set, level, size) {
    const shown = MathMin(MathMax(0, st.maxArrayLength), size);
    const parts = newList();
    st.indent += 2;
    const it = SetPrototypeValues(set);
    for (let n = 0; n < shown || shown !== shown; n++) {
      const step = SetIteratorPrototypeNext(it);
      if (step.done) break;
      push(parts, formatValue(st, step.value, level, false));
    }
    if (size - shown > 0) push(parts, moreItems(size - shown));
    st.indent -= 2;
    return parts;
  }

  // Node's formatMap (lib/internal/util/inspect.js), as of 20.x–26.x; differs: iterates with the captured Map iterator (program replacements are not seen)
  function formatMap(st, map, level, size) {
    const shown = MathMin(MathMax(0, st.maxArrayLength), size);
    const parts = newList();
    st.indent += 2;
    const it = MapPrototypeEntries(map);
    for (let n = 0; n < shown || shown !== shown; n++) {
      const step = MapIteratorPrototypeNext(it);
      if (step.done) break;
      const pair = step.value;
      push(parts, `${formatValue(st, pair[0], level, false)} => ${formatValue(st, pair[1], level, false)}`);
    }
    if (size - shown > 0) push(parts, moreItems(size - shown));
    st.indent -= 2;
    return parts;
  }

  // Values previewed from a Set iterator or WeakSet (weak ones sorted).
  // Node's formatSetIterInner (lib/internal/util/inspect.js), as of 20.x–26.x (also for WeakSet entries, as formatWeakSet)
  function formatSetIterInner(st, level, values, weak) {
    const shown = MathMin(MathMax(st.maxArrayLength, 0), values.length);
    const parts = newList();
    st.indent += 2;
    for (let i = 0; i < shown; i++) push(parts, formatValue(st, values[i], level, false));
    st.indent -= 2;
    if (weak && !st.sorted) ArrayPrototypeSort(parts);
    if (values.length > shown) push(parts, moreItems(values.length - shown));
    return parts;
  }

  // Pairs previewed from a Map iterator (as "[ k, v ]") or a WeakMap (as
  // "k => v", sorted).
  // Node's formatMapIterInner (lib/internal/util/inspect.js), as of 20.x–26.x (also for WeakMap entries, as formatWeakMap)
  function formatMapIterInner(st, level, flat, weak) {
    const pairs = flat.length / 2;
    const limit = MathMax(st.maxArrayLength, 0);
    const shown = MathMin(limit, pairs);
    const parts = newList();
    st.indent += 2;
    for (let i = 0; i < shown; i++) {
      const k = formatValue(st, flat[2 * i], level, false);
      const v = formatValue(st, flat[2 * i + 1], level, false);
      if (weak) {
        push(parts, `${k} => ${v}`);
      } else {
        const pair = newList();
        push(pair, k);
        push(pair, v);
        push(parts, reduceToSingleString(st, pair, '', '[', ']', AS_ARRAY_EXTRAS, level, undefined));
      }
    }
    if (weak && !st.sorted) ArrayPrototypeSort(parts);
    st.indent -= 2;
    if (pairs - limit > 0) push(parts, moreItems(pairs - limit));
    return parts;
  }

  // Node's formatPromise (lib/internal/util/inspect.js), as of 20.x–26.x
  function formatPromise(st, promise, level) {
    const parts = newList();
    const details = nPromiseState(promise);
    if (details[0] === 0) {
      push(parts, st.paint('<pending>', 'special'));
      return parts;
    }
    st.indent += 2;
    const result = formatValue(st, details[1], level, false);
    st.indent -= 2;
    push(parts, details[0] === 2 ? `${st.paint('<rejected>', 'special')} ${result}` : result);
    return parts;
  }

  // Node's formatNamespaceObject (lib/internal/util/inspect.js), as of 20.x–26.x
  function formatNamespaceObject(st, ns, level, keys) {
    const parts = newList();
    for (let i = 0; i < keys.length; i++) {
      let d;
      try {
        d = ObjectGetOwnPropertyDescriptor(ns, keys[i]);
      } catch {
        d = undefined;
      }
      if (d !== undefined) {
        push(parts, formatProperty(st, ns, level, keys[i], AS_PROPERTIES, d));
      } else {
        // An uninitialized binding: print the key as usual and the marker.
        const line = formatProperty(st, ns, level, keys[i], AS_PROPERTIES, { value: '', enumerable: true });
        push(parts, StringPrototypeSlice(line, 0, line.length - 2) + st.paint('<uninitialized>', 'special'));
      }
    }
    return parts;
  }

  // ---- One property ----

  // The printed form of a property's name: `key`, 'quoted key', [hidden],
  // [Symbol(desc)], ['__proto__'].
  function propertyName(st, key, enumerable) {
    if (nodeMajor >= 24) {
      // Node 24+: symbols without brackets ("Symbol(s): 1"); any hidden key
      // is its usual spelling in brackets ("[Symbol(s)]", "['a-b']").
      let name;
      if (typeof key === 'symbol') {
        name = st.paint(escapeText(SymbolPrototypeToString(key), true), 'symbol');
      } else if (isPlainKey(key)) {
        name = key === '__proto__' ? "['__proto__']" : st.paint(key, 'name');
      } else {
        name = st.paint(strEscape(key), 'string');
      }
      return enumerable === false ? `[${name}]` : name;
    }
    if (typeof key === 'symbol') {
      return `[${st.paint(escapeText(SymbolPrototypeToString(key), true), 'symbol')}]`;
    }
    if (key === '__proto__') return "['__proto__']";
    if (enumerable === false) return `[${escapeText(key, true)}]`;
    if (isPlainKey(key)) return st.paint(key, 'name');
    return st.paint(strEscape(key), 'string');
  }

  // The value of an accessor property: [Getter], [Setter], [Getter/Setter],
  // or with the `getters` option the getter's result.
  function accessorText(st, get, set, receiver, level) {
    if (get === undefined) {
      return set === undefined ? st.paint('undefined', 'undefined') : st.paint('[Setter]', 'special');
    }
    const label = set === undefined ? 'Getter' : 'Getter/Setter';
    const wanted = st.getters && (st.getters === true ||
      (st.getters === 'get' && set === undefined) || (st.getters === 'set' && set !== undefined));
    if (!wanted) return st.paint(`[${label}]`, 'special');
    const paint = st.paint;
    if (nodeMajor >= 24) return accessorText24(st, get, receiver, level, label);
    try {
      const got = ReflectApply(get, receiver, []);
      st.indent += 2;
      let text;
      if (got === null) {
        text = `${paint(`[${label}:`, 'special')} ${paint('null', 'null')}${paint(']', 'special')}`;
      } else if (typeof got === 'object') {
        text = `${paint(`[${label}]`, 'special')} ${formatValue(st, got, level, false)}`;
      } else {
        text = `${paint(`[${label}:`, 'special')} ${formatPrimitive(paint, got, st)}${paint(']', 'special')}`;
      }
      st.indent -= 2;
      return text;
    } catch (err) {
      // Node 20/22 read `err.message`, which throws for null and undefined.
      if (err == null) void err.message;
      let message;
      if (isObjectLike(err)) {
        const e = unwrapProxy(err);
        message = e === null ? undefined : lookupData(e, 'message');
      }
      return `${paint(`[${label}:`, 'special')} <Inspection threw (${
        isObjectLike(message) ? '' : message})>${paint(']', 'special')}`;
    }
  }

  // Node 24+: functions returned by a getter are inspected like objects, and
  // a throwing getter shows what it threw, inspected.
  function accessorText24(st, get, receiver, level, label) {
    const paint = st.paint;
    st.indent += 2;
    let text;
    try {
      const got = ReflectApply(get, receiver, []);
      if (got === null) {
        text = `${paint(`[${label}:`, 'special')} ${paint('null', 'null')}${paint(']', 'special')}`;
      } else if (typeof got === 'object' || typeof got === 'function') {
        text = `${paint(`[${label}]`, 'special')} ${formatValue(st, got, level, false)}`;
      } else {
        text = `${paint(`[${label}:`, 'special')} ${formatPrimitive(paint, got, st)}${paint(']', 'special')}`;
      }
    } catch (err) {
      text = `${paint(`[${label}:`, 'special')} <Inspection threw (${formatValue(st, err, level, false)})>${
        paint(']', 'special')}`;
    }
    st.indent -= 2;
    return text;
  }

  // "key: value" for a property of `obj` (just the value for elements).
  // `desc` defaults to the own descriptor (or the getter-free inherited value).
  // Node's formatProperty (lib/internal/util/inspect.js), as of 20.x–26.x; a getter runs only with the `getters` option, as in Node
  function formatProperty(st, obj, level, key, mode, desc, receiver) {
    if (desc === undefined) {
      desc = ObjectGetOwnPropertyDescriptor(obj, key);
      if (desc === undefined) desc = { value: lookupData(obj, key), enumerable: true };
    }
    if (nodeMajor < 22 && NativeErrorStackGetter !== undefined && key === 'stack' && !isDataDescriptor(desc) &&
        desc.get === NativeErrorStackGetter) {
      desc = { value: ReflectApply(NativeErrorStackGetter, obj, []), enumerable: desc.enumerable };
    }
    let text;
    let separator = ' ';
    if (!isDataDescriptor(desc)) {
      text = accessorText(st, desc.get, desc.set, receiver === undefined ? obj : receiver, level);
    } else if (desc.value === undefined) {
      text = st.paint('undefined', 'undefined');
    } else {
      // compact=true objects indent their values by 3 and move a value that
      // is wider than breakLength to its own line.
      const step = st.compact === true && mode === AS_PROPERTIES ? 3 : 2;
      st.indent += step;
      text = formatValue(st, desc.value, level, false);
      if (step === 3 && st.breakLength < getStringWidth(text, st.colors)) {
        separator = `\n${StringPrototypeRepeat(' ', st.indent)}`;
      }
      st.indent -= step;
    }
    if (mode === AS_ELEMENTS) return text;
    return `${propertyName(st, key, desc.enumerable)}:${separator}${text}`;
  }

  // ---- Layout ----

  // Would `parts` fit on one line together with `extra` columns of context?
  // Node's isBelowBreakLength (lib/internal/util/inspect.js), as of 20.x–26.x
  function isBelowBreakLength(st, parts, extra, head) {
    if (nodeMajor >= 24 && st.breakLength === Infinity) {
      // Node 24+: no width limit, so anything without a line break fits.
      if (StringPrototypeIncludes(head, '\n')) return false;
      for (let i = 0; i < parts.length; i++) if (StringPrototypeIncludes(parts[i], '\n')) return false;
      return true;
    }
    let width = parts.length + extra;
    if (width + parts.length > st.breakLength) return false;
    for (let i = 0; i < parts.length; i++) {
      width += st.colors ? removeColors(parts[i]).length : parts[i].length;
      if (width > st.breakLength) return false;
    }
    return head === '' || !StringPrototypeIncludes(head, '\n');
  }

  // Arrange more than six short array entries in aligned columns (numbers
  // right-aligned, anything else left-aligned), as Node does.
  // Node's groupArrayElements (lib/internal/util/inspect.js), as of 20.x–26.x
  function groupArrayElements(st, parts, value) {
    const count = st.maxArrayLength < parts.length ? parts.length - 1 : parts.length;
    const gap = 2; // ", "
    const widths = newList();
    let sum = 0;
    let widest = 0;
    for (let i = 0; i < count; i++) {
      const w = getStringWidth(parts[i], st.colors);
      widths[i] = w;
      sum += w + gap;
      if (w > widest) widest = w;
    }
    const cell = widest + gap;
    if (!(cell * 3 + st.indent < st.breakLength) || !(sum / cell > 5 || widest <= 6)) return parts;

    // Aim for a block about 2.5 times wider than high, biased towards more
    // columns for short entries; never wider than the line, never more than
    // 4 * compact or 15 columns.
    const bias = MathSqrt(cell - sum / parts.length);
    const unit = MathMax(cell - 3 - bias, 1);
    const columns = MathMin(
      MathRound(MathSqrt(2.5 * unit * count) / unit),
      MathFloor((st.breakLength - st.indent) / cell),
      st.compact * 4,
      15);
    if (columns <= 1) return parts;

    const columnWidth = newList();
    for (let c = 0; c < columns; c++) {
      let w = 0;
      for (let j = c; j < parts.length; j += columns) {
        if (widths[j] > w) w = widths[j];
      }
      columnWidth[c] = w + gap;
    }
    let rightAlign = true;
    if (value !== undefined) {
      const typed = nTypeTag(value) === T_TYPED_ARRAY;
      for (let i = 0; i < parts.length; i++) {
        const v = typed ? value[i] : elementValue(value, i);
        if (typeof v !== 'number' && typeof v !== 'bigint') {
          rightAlign = false;
          break;
        }
      }
    }
    const rows = newList();
    for (let start = 0; start < count; start += columns) {
      const end = MathMin(start + columns, count);
      let row = '';
      for (let j = start; j < end; j++) {
        // Pad by display width; escape codes inside a part take no columns.
        const pad = columnWidth[j - start] + parts[j].length - widths[j];
        if (j === end - 1) {
          row += rightAlign ? StringPrototypePadStart(parts[j], pad - gap, ' ') : parts[j];
        } else {
          row += rightAlign ?
            StringPrototypePadStart(`${parts[j]}, `, pad, ' ') :
            StringPrototypePadEnd(`${parts[j]}, `, pad, ' ');
        }
      }
      push(rows, row);
    }
    if (count < parts.length) push(rows, parts[count]);
    return rows;
  }

  // `array[index]` without invoking getters.
  function elementValue(array, index) {
    const d = ObjectGetOwnPropertyDescriptor(array, index);
    if (d !== undefined) return isDataDescriptor(d) ? d.value : undefined;
    const p = protoOf(array);
    return p === null ? undefined : lookupData(p, `${index}`);
  }

  // Join the parts of an object between its braces: on one line when they
  // fit (and the object is among the innermost `compact` levels), else one
  // part per line.
  // Node's reduceToSingleString (lib/internal/util/inspect.js), as of 20.x–26.x
  function reduceToSingleString(st, parts, head, open, close, mode, level, value) {
    const lead = head === '' ? '' : `${head} `;
    if (st.compact !== true) {
      if (typeof st.compact === 'number' && st.compact >= 1) {
        const before = parts.length;
        if (mode === AS_ARRAY_EXTRAS && before > 6) parts = groupArrayElements(st, parts, value);
        if (st.innermost - level < st.compact && parts.length === before &&
            isBelowBreakLength(st, parts, parts.length + st.indent + open.length + head.length + 10, head)) {
          const line = joinWith(parts, ', ');
          if (!StringPrototypeIncludes(line, '\n')) return `${lead}${open} ${line} ${close}`;
        }
      }
      const nl = `\n${StringPrototypeRepeat(' ', st.indent)}`;
      return `${lead}${open}${nl}  ${joinWith(parts, `,${nl}  `)}${nl}${close}`;
    }
    // compact === true: as many parts per line as fit, aligned after `open`.
    const tail = head === '' ? '' : ` ${head}`;
    if (isBelowBreakLength(st, parts, 0, head)) return `${open}${tail} ${joinWith(parts, ', ')} ${close}`;
    const pad = StringPrototypeRepeat(' ', st.indent);
    const first = head === '' && open.length === 1 ? ' ' : `${tail}\n${pad}  `;
    return `${open}${first}${joinWith(parts, `,\n${pad}  `)} ${close}`;
  }

  // =========================================================================
  // 7. util.format
  // =========================================================================

  // Does String(value) give a built-in rendering (so `%s` inspects it)? True
  // when the toString / Symbol.toPrimitive that would be used comes from a
  // prototype whose constructor is a built-in (or when there is none).
  // Node's hasBuiltInToString (lib/internal/util/inspect.js), as of 20.x–26.x; differs: decided from the prototype chain without getters or Proxy traps
  function hasBuiltInToString(value) {
    value = unwrapProxy(value);
    if (value === null) return true;
    const toStringFn = lookupData(value, 'toString');
    const toPrimitiveFn = lookupData(value, SymbolToPrimitive);
    if (ObjectPrototypeHasOwnProperty(value, typeof toStringFn === 'function' ? 'toString' : SymbolToPrimitive) &&
        (typeof toStringFn === 'function' || typeof toPrimitiveFn === 'function')) {
      return false;
    }
    if (typeof toStringFn !== 'function' && typeof toPrimitiveFn !== 'function') return true;
    if (typeof toStringFn === 'function' && typeof toPrimitiveFn === 'function' &&
        ObjectPrototypeHasOwnProperty(value, SymbolToPrimitive)) {
      return false;
    }
    // The nearest prototype that defines the method(s) in play.
    const wantToString = typeof toStringFn === 'function';
    const wantToPrimitive = typeof toPrimitiveFn === 'function';
    let o = value;
    do {
      o = protoOf(o);
      if (o === null) return true;
    } while (!(wantToString && ObjectPrototypeHasOwnProperty(o, 'toString')) &&
             !(wantToPrimitive && ObjectPrototypeHasOwnProperty(o, SymbolToPrimitive)));
    const d = ObjectGetOwnPropertyDescriptor(o, 'constructor');
    return d !== undefined && isDataDescriptor(d) && typeof d.value === 'function' &&
      isBuiltinName(functionName(d.value));
  }

  let circularMessage;
  function firstLine(s) {
    const nl = StringPrototypeIndexOf(s, '\n');
    return nl === -1 ? s : StringPrototypeSlice(s, 0, nl);
  }
  // `%j`: JSON, or '[Circular]' when JSON.stringify reports a cycle.
  // Node's tryStringify (lib/internal/util/inspect.js), as of 20.x–26.x
  function tryStringify(value) {
    try {
      return JSONStringify(value);
    } catch (err) {
      if (circularMessage === undefined) {
        const loop = { self: null };
        loop.self = loop;
        try {
          JSONStringify(loop);
        } catch (e) {
          circularMessage = firstLine(lookupData(e, 'message'));
        }
      }
      if (isObjectLike(err) && nTypeTag(err) === T_ERROR) {
        const message = lookupData(err, 'message');
        if (lookupData(err, 'name') === 'TypeError' && typeof message === 'string' &&
            firstLine(message) === circularMessage) {
          return '[Circular]';
        }
      }
      throw err;
    }
  }

  // The replacement for one format specifier, consuming args[i].
  function specifierText(code, arg, o) {
    switch (code) {
      case 115: // %s
        if (typeof arg === 'number') return formatNumber(stylizeNoColor, arg, o.numericSeparator);
        if (typeof arg === 'bigint') return formatBigInt(stylizeNoColor, arg, o.numericSeparator);
        if (typeof arg === 'object' && arg !== null && hasBuiltInToString(arg)) {
          const brief = copyOptions(o);
          brief.compact = 3;
          brief.colors = false;
          brief.depth = 0;
          return inspectWithOptions(arg, brief);
        }
        return toStr(arg);
      case 106: // %j
        return tryStringify(arg);
      case 100: // %d
        if (typeof arg === 'bigint') return formatBigInt(stylizeNoColor, arg, o.numericSeparator);
        if (typeof arg === 'symbol') return 'NaN';
        return formatNumber(stylizeNoColor, safeToNumber(arg), o.numericSeparator);
      case 79: // %O
        return inspectWithOptions(arg, o);
      case 111: { // %o
        const full = copyOptions(o);
        full.showHidden = true;
        full.showProxy = true;
        full.depth = 4;
        return inspectWithOptions(arg, full);
      }
      case 105: // %i
        if (typeof arg === 'bigint') return formatBigInt(stylizeNoColor, arg, o.numericSeparator);
        if (typeof arg === 'symbol') return 'NaN';
        return formatNumber(stylizeNoColor, NumberParseInt(toStr(arg)), o.numericSeparator);
      case 102: // %f
        if (typeof arg === 'symbol') return 'NaN';
        return formatNumber(stylizeNoColor, NumberParseFloat(toStr(arg)), o.numericSeparator);
      default: // %c
        return '';
    }
  }

  function isSpecifierCode(c) {
    return c === 115 || c === 106 || c === 100 || c === 79 || c === 111 || c === 105 ||
      c === 102 || c === 99;
  }

  // util.formatWithOptions(o, ...args): a leading string's specifiers
  // consume arguments (only while arguments remain; "%%" is always "%");
  // remaining strings are appended verbatim, other values inspected, all
  // separated by single spaces.
  // Node's formatWithOptionsInternal (lib/internal/util/inspect.js), as of 20.x–26.x; differs: ToString of program values emulated (safeToString)
  function formatWithOptionsInternal(o, args) {
    const first = args[0];
    let next = 0;
    let out = '';
    if (typeof first === 'string') {
      if (args.length === 1) return first;
      let from = 0;        // start of the literal text not yet copied
      for (let i = 0; i < first.length - 1; i++) {
        if (StringPrototypeCharCodeAt(first, i) !== 37) continue;
        const code = StringPrototypeCharCodeAt(first, ++i);
        if (code === 37) {
          out += StringPrototypeSlice(first, from, i);
          from = i + 1;
        } else if (next + 1 !== args.length && isSpecifierCode(code)) {
          const text = specifierText(code, args[++next], o);
          out += StringPrototypeSlice(first, from, i - 1) + text;
          from = i + 1;
        }
      }
      if (from !== 0) {
        next++;
        if (from < first.length) out += StringPrototypeSlice(first, from);
        for (; next < args.length; next++) out += ` ${showArgument(args[next], o)}`;
        return out;
      }
    }
    for (; next < args.length; next++) {
      out += (next === 0 ? '' : ' ') + showArgument(args[next], o);
    }
    return out;
  }

  function showArgument(value, o) {
    return typeof value === 'string' ? value : inspectWithOptions(value, o);
  }

  // =========================================================================
  // 8. Public formatting API
  // =========================================================================

  function formatLog(args) {
    return formatWithOptionsInternal(LOG_OPTIONS, args);
  }

  // Node's formatWithOptions (lib/internal/util/inspect.js), as of 20.x–26.x; differs: takes the arguments as one array
  function formatWithOptions(inspectOptions, args) {
    return formatWithOptionsInternal(applyUserOptions(copyOptions(DEFAULT_OPTIONS), inspectOptions), args);
  }

  // Node's inspect (lib/internal/util/inspect.js), as of 20.x–26.x; differs: the console's defaults (depth 4); customInspect and stylize ignored
  function inspect(value, opts) {
    return inspectWithOptions(value, applyUserOptions(copyOptions(LOG_OPTIONS), opts));
  }

  // ---- Runtime-provided custom inspection (trusted code only) ----
  //
  // The runtime may register, for a prototype it owns (URL.prototype, ...), a
  // function with the protocol of Node's [util.inspect.custom]:
  //   fn.call(value, depth, options, inspect)
  // depth: remaining depth; options: a fresh object with the current inspect
  // options (depth, showHidden, colors, ...; `stylize` included); inspect:
  // inspect(value, options) honouring those options. A string result is used
  // as is (its line breaks re-indented), another value is formatted in place,
  // `value` itself means "format normally". It applies to objects whose
  // prototype chain contains the prototype (not to the prototype itself).
  // The program cannot reach this registry; program-defined
  // util.inspect.custom methods are never called.
  let customInspectors;
  function defineCustomInspect(prototype, fn) {
    if (customInspectors === undefined) customInspectors = new MapCtor();
    MapPrototypeSet(customInspectors, prototype, fn);
  }
  function findCustomInspector(value) {
    for (let o = protoOf(value); o !== null; o = protoOf(o)) {
      const fn = MapPrototypeGet(customInspectors, o);
      if (fn !== undefined) return fn;
    }
    return undefined;
  }
  // Node's getUserOptions (lib/internal/util/inspect.js), as of 20.x–26.x; differs: only for runtime inspectors (program util.inspect.custom is never called)
  function getUserOptions(st) {
    return {
      stylize: st.paint,
      showHidden: st.showHidden,
      depth: st.depth,
      colors: st.colors,
      customInspect: true,
      showProxy: st.showProxy,
      maxArrayLength: st.maxArrayLength,
      maxStringLength: st.maxStringLength,
      breakLength: st.breakLength,
      compact: st.compact,
      sorted: st.sorted,
      getters: st.getters,
      numericSeparator: st.numericSeparator,
    };
  }
  function inspectForHooks(value, opts) {
    return inspectWithOptions(value, applyUserOptions(copyOptions(DEFAULT_OPTIONS), opts));
  }

  // =========================================================================
  // 9. Console
  // =========================================================================

  // console.time* durations: "12.345ms", "1.235s", "1:02.500 (m:ss.mmm)",
  // "1:02:03.004 (h:mm:ss.mmm)".
  // Node's formatTime (lib/internal/console/constructor.js), as of 20.x–26.x
  function formatTime(ms) {
    if (!(ms >= 1000)) return `${NumberCtor(NumberPrototypeToFixed(ms, 3))}ms`;
    let hours = 0;
    let minutes = 0;
    if (ms >= 60000) {
      if (ms >= 3600000) {
        hours = MathFloor(ms / 3600000);
        ms %= 3600000;
      }
      minutes = MathFloor(ms / 60000);
      ms %= 60000;
    }
    const seconds = NumberPrototypeToFixed(ms / 1000, 3);
    if (hours === 0 && minutes === 0) return `${seconds}s`;
    const dot = StringPrototypeIndexOf(seconds, '.');
    const whole = StringPrototypePadStart(StringPrototypeSlice(seconds, 0, dot), 2, '0');
    const millis = StringPrototypeSlice(seconds, dot + 1);
    if (hours !== 0) {
      return `${hours}:${StringPrototypePadStart(`${minutes}`, 2, '0')}:${whole}.${millis} (h:mm:ss.mmm)`;
    }
    return `${minutes}:${whole}.${millis} (m:ss.mmm)`;
  }

  // console.table's box drawing.
  const BOX_H = '\u2500';
  function boxLine(widths, left, middle, right) {
    let line = left;
    for (let i = 0; i < widths.length; i++) {
      if (i !== 0) line += middle;
      line += StringPrototypeRepeat(BOX_H, widths[i] + 2);
    }
    return line + right;
  }
  // Node's renderRow (lib/internal/cli_table.js), as of 20.x–26.x
  function renderRow(cells, widths) {
    let line = '\u2502 ';
    for (let i = 0; i < cells.length; i++) {
      if (i !== 0) line += ' \u2502 ';
      const cell = cells[i];
      line += cell + StringPrototypeRepeat(' ', MathCeil(widths[i] - getStringWidth(cell, true)));
    }
    return `${line} \u2502`;
  }
  // `columns[c][r]` is the text of row r in column c (missing: '').
  function drawTable(head, columns) {
    let rowCount = -Infinity;
    for (let c = 0; c < columns.length; c++) {
      if (columns[c].length > rowCount) rowCount = columns[c].length;
    }
    const widths = newList();
    const rows = newList();
    for (let c = 0; c < head.length; c++) {
      let width = getStringWidth(head[c], true);
      for (let r = 0; r < rowCount; r++) {
        if (rows[r] === undefined) rows[r] = newList();
        const text = ObjectPrototypeHasOwnProperty(columns[c], r) ? columns[c][r] : '';
        rows[r][c] = text;
        width = MathMax(width || 0, getStringWidth(text, true));
      }
      widths[c] = width;
    }
    let out = `${boxLine(widths, '\u250c', '\u252c', '\u2510')}\n${renderRow(head, widths)}\n` +
      `${boxLine(widths, '\u251c', '\u253c', '\u2524')}\n`;
    for (let r = 0; r < rows.length; r++) out += `${renderRow(rows[r], widths)}\n`;
    return out + boxLine(widths, '\u2514', '\u2534', '\u2518');
  }

  // Node's ERR_INVALID_ARG_TYPE description of the received value.
  // Node's determineSpecificType (lib/internal/errors.js), as of 20.x–26.x; differs: no getters
  function determineSpecificType(value) {
    if (value === null) return 'null';
    if (value === undefined) return 'undefined';
    switch (typeof value) {
      case 'bigint': return `type bigint (${value}n)`;
      case 'number': return `type number (${ObjectIs(value, -0) ? '-0' : `${value}`})`;
      case 'boolean': return `type boolean (${value})`;
      case 'symbol': return `type symbol (${SymbolPrototypeToString(value)})`;
      case 'function': {
        const t = unwrapProxy(value);
        return `function ${t === null ? '' : nameToString(lookupData(t, 'name'))}`;
      }
      case 'object': {
        const t = unwrapProxy(value);
        const C = t === null ? undefined : lookupData(t, 'constructor');
        const c = isObjectLike(C) ? unwrapProxy(C) : null;
        if (c !== null && hasDataOrOwn(c, 'name')) return `an instance of ${nameToString(lookupData(c, 'name'))}`;
        const brief = copyOptions(DEFAULT_OPTIONS);
        brief.depth = -1;
        return inspectWithOptions(value, brief);
      }
      default: {
        const s = value.length > 28 ? `${StringPrototypeSlice(value, 0, 25)}...` : value;
        return StringPrototypeIncludes(s, "'") ? `type string (${JSONStringify(s)})` : `type string ('${s}')`;
      }
    }
  }

  function invalidArgType(name, expected, actual, callee) {
    const err = new TypeErrorCtor(`The "${name}" argument must be an instance of ${expected}. ` +
      `Received ${determineSpecificType(actual)}`);
    ObjectDefineProperty(err, 'code', {
      __proto__: null, value: 'ERR_INVALID_ARG_TYPE', writable: true, enumerable: true, configurable: true,
    });
    // Node's stack header carries the code: "TypeError [ERR_INVALID_ARG_TYPE]: ...".
    ObjectDefineProperty(err, 'name', {
      __proto__: null, value: 'TypeError [ERR_INVALID_ARG_TYPE]', writable: true, enumerable: false, configurable: true,
    });
    ErrorCaptureStackTrace(err, callee);
    getWithAccessors(err, 'stack');
    delete err.name;
    return err;
  }

  // console.table(data, properties) as text.
  function tableText(data, properties) {
    const cell = (v) => inspectWithOptions(v, LOG_OPTIONS);
    const positions = (n) => {
      const out = newList();
      for (let i = 0; i < n; i++) push(out, cell(i));
      return out;
    };
    let target = unwrapProxy(data);
    if (target === null) target = data;
    const kind = nTypeTag(target);

    // Maps and Map iterators over entries: (iteration index) | Key | Values
    let previewed;
    let pairs = kind === T_MAP;
    if (kind === T_MAP_ITERATOR) {
      const preview = nPreviewEntries(target);
      previewed = preview[0];
      pairs = preview[1];
    }
    if (pairs) {
      const keyColumn = newList();
      const valueColumn = newList();
      if (kind === T_MAP) {
        const it = MapPrototypeEntries(target);
        for (let step = MapIteratorPrototypeNext(it); !step.done; step = MapIteratorPrototypeNext(it)) {
          push(keyColumn, cell(step.value[0]));
          push(valueColumn, cell(step.value[1]));
        }
      } else {
        for (let i = 0; i < previewed.length / 2; i++) {
          push(keyColumn, cell(previewed[2 * i]));
          push(valueColumn, cell(previewed[2 * i + 1]));
        }
      }
      return drawTable(['(iteration index)', 'Key', 'Values'],
        [positions(keyColumn.length), keyColumn, valueColumn]);
    }

    // Sets and iterators over values: (iteration index) | Values
    if (kind === T_SET_ITERATOR) previewed = nPreviewEntries(target)[0];
    if (kind === T_SET || kind === T_SET_ITERATOR || kind === T_MAP_ITERATOR) {
      const valueColumn = newList();
      if (kind === T_SET) {
        const it = SetPrototypeValues(target);
        for (let step = SetIteratorPrototypeNext(it); !step.done; step = SetIteratorPrototypeNext(it)) {
          push(valueColumn, cell(step.value));
        }
      } else {
        for (let i = 0; i < previewed.length; i++) push(valueColumn, cell(previewed[i]));
      }
      return drawTable(['(iteration index)', 'Values'], [positions(valueColumn.length), valueColumn]);
    }

    // Anything else: one row per own enumerable key; a column per property
    // of the rows (or per requested property), plus "Values" for primitive
    // rows. Column order: V8's own-key order of a map from name to column.
    const rowKeys = ObjectKeys(target);
    let wanted;
    if (properties !== undefined) {
      const p = unwrapProxy(properties);
      wanted = newList();
      const n = p === null ? 0 : lookupData(p, 'length');
      for (let i = 0; i < n; i++) push(wanted, elementValue(p, i));
    }
    const byName = ObjectCreate(null);
    const primitiveColumn = newList();
    let anyPrimitive = false;
    for (let r = 0; r < rowKeys.length; r++) {
      const row = lookupData(target, rowKeys[r]);
      const primitive = row === null || (typeof row !== 'function' && typeof row !== 'object');
      if (primitive && wanted === undefined) {
        anyPrimitive = true;
        primitiveColumn[r] = cell(row);
        continue;
      }
      let source = primitive ? row : unwrapProxy(row);
      if (source === null) source = row;
      const names = wanted === undefined ? ObjectKeys(source) : wanted;
      for (let k = 0; k < names.length; k++) {
        const name = names[k];
        if (byName[name] === undefined) byName[name] = newList();
        byName[name][r] = primitive || !ObjectPrototypeHasOwnProperty(source, name) ?
          '' : cell(lookupData(source, name));
      }
    }
    const head = newList();
    const columns = newList();
    push(head, '(index)');
    push(columns, rowKeys);
    const names = ObjectKeys(byName);
    const lists = ObjectValues(byName);
    for (let i = 0; i < names.length; i++) {
      push(head, names[i]);
      push(columns, lists[i]);
    }
    if (anyPrimitive) {
      push(head, 'Values');
      push(columns, primitiveColumn);
    }
    return drawTable(head, columns);
  }

  function createConsole(emit, onWarning) {
    const options = LOG_OPTIONS;
    let indent = '';
    const counts = new MapCtor();
    const timers = new MapCtor();

    // One entry per chunk Node would write, with the group indentation.
    function write(text) {
      if (indent !== '') text = indent + replaceNewlines(text, `\n${indent}`);
      emit(text);
    }
    function warning(message) {
      if (typeof onWarning === 'function') onWarning(message);
    }
    function argsFrom(list, start) {
      const out = newList();
      for (let i = start; i < list.length; i++) push(out, list[i]);
      return out;
    }
    function labelText(label) {
      return label === undefined ? 'default' : safeToString(label);
    }

    function log() {
      write(formatWithOptionsInternal(options, argsFrom(arguments, 0)));
    }
    function warn() {
      write(formatWithOptionsInternal(options, argsFrom(arguments, 0)));
    }
    function dir(value, dirOptions) {
      write(inspectWithOptions(value, applyUserOptions(copyOptions(options), dirOptions)));
    }
    function time(label) {
      label = labelText(label);
      if (MapPrototypeHas(timers, label)) {
        warning(`Label '${label}' already exists for console.time()`);
        return;
      }
      MapPrototypeSet(timers, label, nNow());
    }
    function reportTime(method, label, extra) {
      const started = MapPrototypeGet(timers, label);
      if (started === undefined) {
        warning(`No such label '${label}' for console.${method}()`);
        return false;
      }
      const args = newList();
      push(args, '%s: %s');
      push(args, label);
      push(args, formatTime(nNow() - started));
      if (extra !== undefined) for (let i = 0; i < extra.length; i++) push(args, extra[i]);
      write(formatWithOptionsInternal(options, args));
      return true;
    }
    function timeEnd(label) {
      label = labelText(label);
      if (reportTime('timeEnd', label)) MapPrototypeDelete(timers, label);
    }
    function timeLog(label) {
      reportTime('timeLog', labelText(label), argsFrom(arguments, 1));
    }
    function trace() {
      const message = formatWithOptionsInternal(options, argsFrom(arguments, 0));
      const frames = nStackFrames();
      const header = message === '' ? 'Trace' : `Trace: ${message}`;
      write(frames === '' ? header : `${header}\n${frames}`);
    }
    function assert(condition) {
      if (condition) return;
      const args = argsFrom(arguments, 1);
      if (nodeMajor >= 22) {
        // Node 22+ (the WHATWG console spec): a string message is prefixed,
        // anything else is formatted after "Assertion failed".
        if (args.length !== 0 && typeof args[0] === 'string') {
          args[0] = `Assertion failed: ${args[0]}`;
        } else {
          for (let i = args.length; i > 0; i--) args[i] = args[i - 1];
          args[0] = 'Assertion failed';
        }
      } else {
        args[0] = args.length === 0 ? 'Assertion failed' : `Assertion failed: ${safeToString(args[0])}`;
      }
      write(formatWithOptionsInternal(options, args));
    }
    function clear() {
      // Node clears only a TTY; our output never is one.
    }
    function count(label) {
      label = labelText(label);
      const n = (MapPrototypeGet(counts, label) || 0) + 1;
      MapPrototypeSet(counts, label, n);
      write(`${label}: ${n}`);
    }
    function countReset(label) {
      if (label === undefined) label = 'default';
      // Node looks the raw label up, then deletes the string form.
      if (!MapPrototypeHas(counts, label)) {
        warning(`Count for '${safeToString(label)}' does not exist`);
        return;
      }
      MapPrototypeDelete(counts, safeToString(label));
    }
    function group() {
      if (arguments.length !== 0) write(formatWithOptionsInternal(options, argsFrom(arguments, 0)));
      indent += '  ';
    }
    function groupEnd() {
      indent = StringPrototypeSlice(indent, 0, indent.length - 2);
    }
    function table(data, properties) {
      if (properties !== undefined && !isArrayValue(properties)) {
        throw invalidArgType('properties', 'Array', properties, table);
      }
      write(data !== null && typeof data === 'object' ? tableText(data, properties) : formatWithOptionsInternal(options, [data]));
    }

    const methods = {
      log, info: log, debug: log, dirxml: log,
      warn, error: warn,
      dir, time, timeEnd, timeLog, trace, assert, clear, count, countReset,
      group, groupCollapsed: group, groupEnd, table,
    };
    const consoleObject = ObjectCreate(null);
    const names = ObjectKeys(methods);
    for (let i = 0; i < names.length; i++) {
      // Bound: the method's source is not shown and `this` does not matter.
      const fn = FunctionPrototypeBind(methods[names[i]], undefined);
      ObjectDefineProperty(fn, 'name', { __proto__: null, value: names[i], configurable: true });
      ObjectDefineProperty(consoleObject, names[i], {
        __proto__: null, value: fn, writable: true, enumerable: true, configurable: true,
      });
    }
    return consoleObject;
  }

  return ObjectFreeze({
    __proto__: null,
    formatLog,
    formatWithOptions,
    inspect,
    createConsole,
    defineCustomInspect,
    setNodeMajor,
    // for tests
    getStringWidth,
    stripVTControlCharacters,
  });
})
