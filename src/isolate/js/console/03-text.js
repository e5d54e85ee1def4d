  // 03-text.js: a fragment of the body of the one function the files of parts.txt join into, in its
  // order (README.md): string escaping and quoting (strEscape), terminal escape sequences
  // (stripVTControlCharacters).

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
  // Node's escapeFn (lib/internal/util/inspect.js), as of 20.x-26.x; differs: a switch instead of the meta table
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
  // Node's strEscape (lib/internal/util/inspect.js), as of 20.x-26.x; differs: no regexps (a loop over code units, escapeText)
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
  // Node's stripVTControlCharacters (lib/internal/util/inspect.js), as of 20.x-26.x; differs: no regexp: a scanner of the pattern (ansi-regex 6.2 on 24+)
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

