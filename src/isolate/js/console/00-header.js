// 00-header.js: the start of the one function the files of parts.txt join into, in its order
// (README.md): the header (API, natives contract, captured state) and `(function (natives) {`.
//
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
// The script is ONE function expression, joined from the files of this
// folder listed in parts.txt (each after this one is a fragment of the
// function's body, one concern each; the Rust side joins them at compile
// time, the tests with join.cjs). The runtime compiles it once per
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
// body runs (section 1, 01-intrinsics.js): Function.prototype.call/bind (uncurried with
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
//       script is the program (this script's frames and other runtime scripts'
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

