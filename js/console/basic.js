// Interim console formatter: strings verbatim, other values in util.inspect's single-line style.
// Replaced by the full util.inspect implementation (issue 6).
(function (natives) {
  'use strict';
  const ObjectKeys = Object.keys;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ArrayIsArray = Array.isArray;
  const ObjectIs = Object.is;
  const StringCtor = String;
  const JSONStringify = JSON.stringify;
  const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  const RegExpTest = RegExp.prototype.test;
  const ReflectApply = Reflect.apply;

  function quote(s) {
    if (!s.includes("'")) return `'${s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}'`;
    return JSONStringify(s);
  }

  function inspect(value, depth, seen) {
    switch (typeof value) {
      case 'string': return depth === 0 ? value : quote(value);
      case 'number': return ObjectIs(value, -0) ? '-0' : StringCtor(value);
      case 'bigint': return `${value}n`;
      case 'symbol': return StringCtor(value);
      case 'undefined': return 'undefined';
      case 'boolean': return value ? 'true' : 'false';
      case 'function': return value.name ? `[Function: ${value.name}]` : '[Function (anonymous)]';
    }
    if (value === null) return 'null';
    if (seen.includes(value)) return '[Circular *1]';
    if (depth > 4) return ArrayIsArray(value) ? '[Array]' : '[Object]';
    seen.push(value);
    let out;
    if (ArrayIsArray(value)) {
      const parts = [];
      for (let i = 0; i < value.length; i++) parts.push(inspect(value[i], depth + 1, seen));
      out = parts.length ? `[ ${parts.join(', ')} ]` : '[]';
    } else {
      const keys = ObjectKeys(value);
      const parts = [];
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        const key = ReflectApply(RegExpTest, IDENT, [k]) ? k : quote(k);
        parts.push(`${key}: ${inspect(value[k], depth + 1, seen)}`);
      }
      const proto = ObjectGetPrototypeOf(value);
      const prefix = proto === null ? '[Object: null prototype] ' : '';
      out = parts.length ? `${prefix}{ ${parts.join(', ')} }` : `${prefix}{}`;
    }
    seen.pop();
    return out;
  }

  function formatLog(args) {
    const parts = [];
    for (let i = 0; i < args.length; i++) {
      parts.push(typeof args[i] === 'string' ? args[i] : inspect(args[i], 1, []));
    }
    return parts.join(' ');
  }

  return { formatLog };
})
