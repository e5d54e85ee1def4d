'use strict';
// Regenerates the column-width table embedded in src/isolate/js/console/04-width.js (WIDTH_TABLE).
// Run with the Node whose output we match:  node --expose-internals scripts/gen-width-table.cjs
// Node measures display width with ICU (East Asian Width, emoji presentation, zero-width
// categories); the isolate has no such API, so we snapshot the per-code-point widths that
// this Node's ICU reports and ship them as ranges. Code points not listed have width 1.
// Encoding: comma-separated ranges "<gap><w><len>" where gap = start - (previous end + 1) and
// len = end - start, both base 36, and w is '.' for width 0 or ':' for width 2.
const { internalBinding } = require('internal/test/binding');
const icu = internalBinding('icu');
const ranges = [];
let cur = null;
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue; // lone surrogates measure 1
  const w = icu.getStringWidth(String.fromCodePoint(cp));
  if (w === 1) { cur = null; continue; }
  if (w !== 0 && w !== 2) throw new Error(`unexpected width ${w} at ${cp}`);
  if (cur && cur.w === w && cur.end === cp - 1) cur.end = cp;
  else { cur = { start: cp, end: cp, w }; ranges.push(cur); }
}
let prevEnd = -1;
const parts = [];
for (const r of ranges) {
  parts.push((r.start - prevEnd - 1).toString(36) + (r.w === 0 ? '.' : ':') + (r.end - r.start).toString(36));
  prevEnd = r.end;
}
process.stdout.write(`// ICU ${process.versions.icu}, Unicode ${process.versions.unicode}, ${ranges.length} ranges\n`);
process.stdout.write(parts.join(',') + '\n');
