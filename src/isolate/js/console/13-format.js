  // 13-format.js: a fragment of the body of the one function the files of parts.txt join into, in
  // its order (README.md): format strings (%s %d %i %f %j %o %O %c), formatWithOptions, the public
  // formatting API.

  // =========================================================================
  // 7. util.format
  // =========================================================================

  // Does String(value) give a built-in rendering (so `%s` inspects it)? True
  // when the toString / Symbol.toPrimitive that would be used comes from a
  // prototype whose constructor is a built-in (or when there is none).
  // Node's hasBuiltInToString (lib/internal/util/inspect.js), as of 20.x-26.x; differs: decided from the prototype chain without getters or Proxy traps
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
  // Node's tryStringify (lib/internal/util/inspect.js), as of 20.x-26.x
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
  // Node's formatWithOptionsInternal (lib/internal/util/inspect.js), as of 20.x-26.x; differs: ToString of program values emulated (safeToString)
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

  // Node's formatWithOptions (lib/internal/util/inspect.js), as of 20.x-26.x; differs: takes the arguments as one array
  function formatWithOptions(inspectOptions, args) {
    return formatWithOptionsInternal(applyUserOptions(copyOptions(DEFAULT_OPTIONS), inspectOptions), args);
  }

  // Node's inspect (lib/internal/util/inspect.js), as of 20.x-26.x; differs: the console's defaults (depth 4); customInspect and stylize ignored
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
  // Node's getUserOptions (lib/internal/util/inspect.js), as of 20.x-26.x; differs: only for runtime inspectors (program util.inspect.custom is never called)
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

