// Parity of js/console/inspect.js with this machine's Node (the target is
// v20.20.2): every corpus case is formatted by our implementation in a fresh
// vm context (a bare realm, primordials captured from it) and by Node's own
// util.formatWithOptions / Console, and the strings must be byte-identical.
//
// Node internals (proxy targets, promise state, iterator previews) are only
// reachable with --expose-internals, so the two worlds run in one child
// process (__test__/console-harness.cjs) and report JSON back here.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CORPUS } from './console-corpus.mjs';

const harness = fileURLToPath(new URL('./console-harness.cjs', import.meta.url));
const child = spawnSync(process.execPath, ['--expose-internals', '--no-warnings', harness], {
  encoding: 'utf8',
  maxBuffer: 1 << 28,
});
if (child.status !== 0) {
  throw new Error(`console harness failed (${child.status}): ${child.stderr}`);
}
const report = JSON.parse(child.stdout);

describe('console corpus', () => {
  it('has at least 300 cases and covers every kind', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(300);
    expect(report.results.length).toBe(CORPUS.length);
    expect(CORPUS.some((t) => t.kind === 'console')).toBe(true);
  });

  it('is checked against Node 20', () => {
    expect(report.node.split('.')[0]).toBe('v20');
  });
});

describe('console parity with Node util.formatWithOptions / Console', () => {
  for (const r of report.results) {
    it(r.name, () => {
      expect(typeof r.oracle === 'string' && r.oracle.startsWith('<<case threw')).toBe(false);
      if (r.knownDifference) {
        // Documented, intentional difference (see the case's reason).
        expect(r.ours).toStrictEqual(r.knownDifference.ours);
        expect(r.oracle).not.toStrictEqual(r.ours);
        return;
      }
      expect(r.ours).toStrictEqual(r.oracle);
      if (r.expected !== undefined) expect(r.ours).toStrictEqual(r.expected);
      if (r.startsWith !== undefined) expect(r.ours.startsWith(r.startsWith)).toBe(true);
      if (r.endsWith !== undefined) expect(r.ours.endsWith(r.endsWith)).toBe(true);
    });
  }
});

describe('output is unchanged after the program mutates every built-in', () => {
  it('ran', () => {
    expect(report.mutation.length).toBeGreaterThan(300);
  });
  for (const r of report.mutation) {
    it(r.name, () => {
      expect(r.ours).toStrictEqual(r.oracle);
    });
  }
});

describe('terminal-escape stripping and display width match Node on 20 000 random strings', () => {
  it('no mismatch', () => {
    expect(report.fuzz).toStrictEqual([]);
  });
});
