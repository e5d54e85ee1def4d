  // 06-primitives.js: a fragment of the body of the one function the files of parts.txt join into,
  // in its order (README.md): primitives: numbers, bigints, strings (formatPrimitive).

  // =========================================================================
  // 5. Primitives
  // =========================================================================

  // '1234567' -> '1_234_567' (a leading '-' is kept apart).
  // Node's addNumericSeparator (lib/internal/util/inspect.js), as of 20.x-26.x
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
  // Node's addNumericSeparatorEnd (lib/internal/util/inspect.js), as of 20.x-26.x
  function addNumericSeparatorEnd(digits) {
    let grouped = '';
    let i = 0;
    while (digits.length - i > 3) {
      grouped += `${StringPrototypeSlice(digits, i, i + 3)}_`;
      i += 3;
    }
    return grouped + StringPrototypeSlice(digits, i);
  }

  // Node's formatNumber (lib/internal/util/inspect.js), as of 20.x-26.x
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

  // Node's formatBigInt (lib/internal/util/inspect.js), as of 20.x-26.x
  function formatBigInt(paint, n, separators) {
    const text = `${n}`;
    return paint(`${separators ? addNumericSeparator(text) : text}n`, 'bigint');
  }

  // Node's formatPrimitive (lib/internal/util/inspect.js), as of 20.x-26.x
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

