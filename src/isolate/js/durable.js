// Runs once per durable run, in the program's context (and in each `node:vm` context it makes),
// before any program code (docs/durable.md#determinism): the clock and randomness come from the
// journal, so every attempt of the run sees the same ones; what has no order an attempt could
// replay is refused.
//
// natives: {
//   now(): number      the virtual clock, in milliseconds since the epoch
//   random(): number   the next number in [0, 1) from the journal's seed
// }
(function (natives) {
  'use strict';
  const { now, random } = natives;
  const global = globalThis;
  const RealDate = global.Date;
  const ReflectConstruct = Reflect.construct;
  const ReflectApply = Reflect.apply;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const WeakMapCtor = WeakMap;
  const WeakMapGet = WeakMap.prototype.get;
  const WeakMapSet = WeakMap.prototype.set;
  const TypeErrorCtor = TypeError;
  const dateToString = RealDate.prototype.toString;

  function define(target, key, value) {
    ObjectDefineProperty(target, key, { __proto__: null, value, writable: true, enumerable: false, configurable: true });
  }

  // `Date`: the same class (its prototype, its instances), with "now" read from the virtual clock.
  const Date = function Date(...args) {
    if (new.target === undefined) return ReflectApply(dateToString, ReflectConstruct(RealDate, [now()]), []);
    return ReflectConstruct(RealDate, args.length === 0 ? [now()] : args, new.target);
  };
  ObjectDefineProperty(Date, 'length', { __proto__: null, value: 7, writable: false, enumerable: false, configurable: true });
  ObjectDefineProperty(Date, 'prototype', { __proto__: null, value: RealDate.prototype, writable: false, enumerable: false, configurable: false });
  define(Date, 'now', function now_() { return now(); });
  define(Date, 'parse', RealDate.parse);
  define(Date, 'UTC', RealDate.UTC);
  define(RealDate.prototype, 'constructor', Date);
  define(global, 'Date', Date);

  define(global.Math, 'random', function random_() { return random(); });

  // Intl.DateTimeFormat formats "now" when given no date: the virtual clock's.
  const DateTimeFormat = typeof global.Intl === 'object' ? global.Intl.DateTimeFormat : undefined;
  if (typeof DateTimeFormat === 'function') {
    const proto = DateTimeFormat.prototype;
    const formatGetter = ObjectGetOwnPropertyDescriptor(proto, 'format').get;
    const formatToParts = proto.formatToParts;
    // One wrapper per formatter's bound format, as `format` gives the same function each time.
    const wrapped = new WeakMapCtor();
    ObjectDefineProperty(proto, 'format', {
      __proto__: null,
      enumerable: false,
      configurable: true,
      get: function format() {
        const bound = ReflectApply(formatGetter, this, []);
        let f = ReflectApply(WeakMapGet, wrapped, [bound]);
        if (f === undefined) {
          f = { '': (date) => bound(date === undefined ? now() : date) }[''];
          ReflectApply(WeakMapSet, wrapped, [bound, f]);
        }
        return f;
      },
    });
    define(proto, 'formatToParts', function formatToParts_(date) {
      return ReflectApply(formatToParts, this, [date === undefined ? now() : date]);
    });
  }

  // What the collector decides, and waits in real time, have no order a later attempt could replay.
  function refuse(name, why) {
    return function () {
      throw new TypeErrorCtor(`${name} is not available in a durable run (runDurable): ${why}, which a resumed attempt could not replay`);
    };
  }
  define(global, 'WeakRef', refuse('WeakRef', 'when the collector clears it depends on memory'));
  define(global, 'FinalizationRegistry', refuse('FinalizationRegistry', 'when the collector calls it depends on memory'));
  if (typeof global.Atomics === 'object' && typeof global.Atomics.waitAsync === 'function') {
    define(global.Atomics, 'waitAsync', refuse('Atomics.waitAsync', 'its timeout runs in real time'));
  }
  return {};
})
