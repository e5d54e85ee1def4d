  // 14-console.js: a fragment of the body of the one function the files of parts.txt join into, in
  // its order (README.md): the Console methods (log, dir, time, count, group, table, ...).

  // =========================================================================
  // 9. Console
  // =========================================================================

  // console.time* durations: "12.345ms", "1.235s", "1:02.500 (m:ss.mmm)",
  // "1:02:03.004 (h:mm:ss.mmm)".
  // Node's formatTime (lib/internal/console/constructor.js in 20.x, lib/internal/util/debuglog.js later), as of 20.x-26.x
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
  // Node's renderRow (lib/internal/cli_table.js), as of 20.x-26.x
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
  // Node's table (lib/internal/cli_table.js), as of 20.x-26.x; named drawTable as `table` is the console method
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
  // Node's determineSpecificType (lib/internal/errors.js), as of 20.x-26.x; differs: no getters
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
    // Node's timeLogImpl (lib/internal/console/constructor.js in 20.x, lib/internal/util/debuglog.js later), as of 20.x-26.x; differs: warnings go to onWarning
    function timeLogImpl(method, label, extra) {
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
      if (timeLogImpl('timeEnd', label)) MapPrototypeDelete(timers, label);
    }
    function timeLog(label) {
      timeLogImpl('timeLog', labelText(label), argsFrom(arguments, 1));
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

