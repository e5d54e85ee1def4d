// Runs once per isolate, before the program, with natives the Rust side provides. Everything it
// needs from the language is captured here, so a program that later replaces globals or prototype
// methods cannot change how the runtime behaves. The script name carries no host path.
//
// natives: {
//   log(text: string): void            one log entry through the output ledger
//   exit(code: string): void           ends the run (uncatchable) with worker-exit
//   queueMicrotask(fn): void           the isolate's microtask queue
//   createConsole(emit): console       Node's console methods (src/isolate/js/console/)
//   TextDecoder                        the runtime's TextDecoder class (src/isolate/js/web.js)
// }
(function (natives) {
  'use strict';
  const { log, exit, queueMicrotask, createConsole, TextDecoder } = natives;
  const decoder = new TextDecoder();
  const decode = TextDecoder.prototype.decode;
  const ObjectCreate = Object.create;
  const ObjectFreeze = Object.freeze;
  const ObjectDefineProperty = Object.defineProperty;
  const ReflectApply = Reflect.apply;
  const ArrayBufferIsView = ArrayBuffer.isView;
  const NumberIsInteger = Number.isInteger;
  const RegExpPrototypeExec = RegExp.prototype.exec;
  const StringCtor = String;
  const TypeErrorCtor = TypeError;
  const ErrorCtor = Error;

  const INTEGER_STRING = /^-?\d+$/;

  function describe(value) {
    if (value === null) return 'null';
    if (typeof value === 'function') return `function ${value.name}`;
    if (typeof value === 'object') return 'an instance of Object';
    if (typeof value === 'string') return `type string ('${value}')`;
    if (typeof value === 'symbol' || typeof value === 'bigint') return `type ${typeof value}`;
    return `type ${typeof value} (${StringCtor(value)})`;
  }

  function define(target, key, value) {
    ObjectDefineProperty(target, key, { __proto__: null, value, writable: true, enumerable: false, configurable: true });
  }

  // console: Node's console methods on a null-prototype object; each entry goes to the ledger.
  const console = createConsole(log);

  // process.stdout / process.stderr: each write is one log entry; the callback runs as a microtask.
  function write(chunk, encoding, callback) {
    let text;
    if (typeof chunk === 'string') text = chunk;
    else if (ArrayBufferIsView(chunk)) text = ReflectApply(decode, decoder, [chunk]);
    else text = StringCtor(chunk);
    log(text);
    const cb = typeof encoding === 'function' ? encoding : typeof callback === 'function' ? callback : undefined;
    if (cb !== undefined) queueMicrotask(() => { cb(null); });
    return true;
  }
  const stdout = ObjectCreate(null);
  define(stdout, 'write', function write_(chunk, encoding, callback) { return write(chunk, encoding, callback); });
  const stderr = ObjectCreate(null);
  define(stderr, 'write', function write_(chunk, encoding, callback) { return write(chunk, encoding, callback); });

  function processExit(code) {
    let rendered;
    if (code === undefined) rendered = '0';
    else if (typeof code === 'number' && NumberIsInteger(code)) rendered = StringCtor(code);
    else if (typeof code === 'string' && ReflectApply(RegExpPrototypeExec, INTEGER_STRING, [code]) !== null) rendered = code;
    else {
      throw new TypeErrorCtor(`The "code" argument must be of type number. Received ${describe(code)}`);
    }
    exit(rendered);
  }

  const process = {
    env: ObjectFreeze({ __proto__: Object.prototype }),
    stdout,
    stderr,
    exit: function exit(code) { processExit(code); },
  };

  // Typed binding errors (docs/typescript.md#typed-error-classes): one class per namespace, fields
  // defined with captured intrinsics: mutating Object.defineProperty, Error, ... cannot change them.
  function makeErrorClass(name, memberProperty) {
    const ErrorClass = class extends ErrorCtor {
      constructor(memberName, message) {
        super(message);
        ObjectDefineProperty(this, 'name', { __proto__: null, value: name, enumerable: true, writable: false, configurable: false });
        ObjectDefineProperty(this, memberProperty, { __proto__: null, value: memberName, enumerable: true, writable: false, configurable: false });
      }
    };
    ObjectDefineProperty(ErrorClass, 'name', { __proto__: null, value: name, writable: false, enumerable: false, configurable: true });
    return ErrorClass;
  }

  return { console, process, makeErrorClass };
})
