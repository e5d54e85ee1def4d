// node:vm (docs/typescript.md#modules-and-nodevm): the subset of Node's API over the natives of
// src/isolate/vm.rs. Script compiles at construction (a SyntaxError throws there) and runs in a
// context node:vm made, or in the program's own; createContext returns the new context's global.
(function (natives) {
  'use strict';
  const { compile, run, newContext, isVmContext } = natives;
  const { keys } = Object;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;

  function coded(Ctor, message, code) {
    const error = new Ctor(message);
    error.code = code;
    return error;
  }
  function received(value) {
    if (value === null) return 'Received null';
    if (typeof value === 'function') return 'Received function';
    if (typeof value === 'object') return 'Received an instance of Object';
    const shown = typeof value === 'string' ? `'${value.length > 25 ? value.slice(0, 25) + '...' : value}'` : `${String(value)}`;
    return `Received type ${typeof value} (${shown})`;
  }
  function invalidType(name, type, value) {
    return coded(TypeErrorCtor, `The "${name}" argument must be of type ${type}. ${received(value)}`, 'ERR_INVALID_ARG_TYPE');
  }
  function validateObject(value, name) {
    if (value === null || typeof value !== 'object') throw invalidType(name, 'object', value);
  }
  function validateInt32(value, name) {
    if (typeof value !== 'number') throw invalidType(name, 'number', value);
    if (!Number.isInteger(value) || value < -2147483648 || value > 2147483647) {
      throw coded(RangeErrorCtor, `The value of "${name}" is out of range. It must be an integer >= -2147483648 && <= 2147483647. Received ${value}`, 'ERR_OUT_OF_RANGE');
    }
  }
  function readTimeout(options) {
    if (options === undefined) return undefined;
    validateObject(options, 'options');
    const { timeout } = options;
    if (timeout === undefined) return undefined;
    if (typeof timeout !== 'number') throw invalidType('options.timeout', 'number', timeout);
    if (!Number.isInteger(timeout) || timeout < 1 || timeout > 4294967295) {
      throw coded(RangeErrorCtor, `The value of "options.timeout" is out of range. It must be >= 1 && <= 4294967295. Received ${timeout}`, 'ERR_OUT_OF_RANGE');
    }
    return timeout;
  }
  function validateContext(contextifiedObject) {
    if (contextifiedObject === null || typeof contextifiedObject !== 'object') {
      throw invalidType('contextifiedObject', 'object', contextifiedObject);
    }
    if (!isVmContext(contextifiedObject)) {
      throw coded(TypeErrorCtor, 'The "contextifiedObject" argument must be an vm.Context', 'ERR_INVALID_ARG_TYPE');
    }
  }

  class Script {
    #code;
    #filename;
    #lineOffset;
    #columnOffset;
    constructor(code, options = {}) {
      code = `${code}`;
      if (typeof options === 'string') options = { filename: options };
      else validateObject(options, 'options');
      const { filename = 'evalmachine.<anonymous>', lineOffset = 0, columnOffset = 0 } = options;
      if (typeof filename !== 'string') throw invalidType('options.filename', 'string', filename);
      validateInt32(lineOffset, 'options.lineOffset');
      validateInt32(columnOffset, 'options.columnOffset');
      compile(code, filename, lineOffset, columnOffset);
      this.#code = code;
      this.#filename = filename;
      this.#lineOffset = lineOffset;
      this.#columnOffset = columnOffset;
    }
    runInThisContext(options) {
      return run(this.#code, this.#filename, this.#lineOffset, this.#columnOffset, undefined, readTimeout(options));
    }
    runInContext(contextifiedObject, options) {
      validateContext(contextifiedObject);
      return run(this.#code, this.#filename, this.#lineOffset, this.#columnOffset, contextifiedObject, readTimeout(options));
    }
    runInNewContext(contextObject, options) {
      return this.runInContext(createContext(contextObject, options), options);
    }
  }

  function isContext(object) {
    validateObject(object, 'object');
    return isVmContext(object);
  }
  // Node makes the object itself the context; here the context is a new global, which receives
  // the object's own enumerable properties once and is what createContext returns.
  function createContext(contextObject = {}, options = {}) {
    if (contextObject !== null && typeof contextObject === 'object' && isVmContext(contextObject)) return contextObject;
    validateObject(contextObject, 'contextObject');
    validateObject(options, 'options');
    if (options.name !== undefined && typeof options.name !== 'string') throw invalidType('options.name', 'string', options.name);
    const global = newContext();
    for (const key of keys(contextObject)) global[key] = contextObject[key];
    return global;
  }
  function scriptOptions(options) {
    return typeof options === 'string' ? { filename: options } : options;
  }
  function runOptions(options) {
    return typeof options === 'string' ? undefined : options;
  }
  function runInContext(code, contextifiedObject, options) {
    validateContext(contextifiedObject);
    return new Script(code, scriptOptions(options)).runInContext(contextifiedObject, runOptions(options));
  }
  function runInNewContext(code, contextObject, options) {
    return new Script(code, scriptOptions(options)).runInNewContext(contextObject, runOptions(options));
  }
  function runInThisContext(code, options) {
    return new Script(code, scriptOptions(options)).runInThisContext(runOptions(options));
  }
  return { Script, createContext, isContext, runInContext, runInNewContext, runInThisContext };
})
