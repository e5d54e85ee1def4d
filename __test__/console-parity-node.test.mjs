// Parity of the console formatter (src/isolate/js/console/, its parts joined) with the Node this
// suite runs under (20, 22, 24 or 26; the formatter follows that major, see src/isolate/js/console/README.md): every
// corpus case is formatted by our implementation in a fresh vm context (a bare
// realm, primordials captured from it) and by Node's own
// util.formatWithOptions / Console, and the strings must be byte-identical.
//
// Node internals (proxy targets, promise state, iterator previews) are only
// reachable with --expose-internals, so the two worlds run in one child
// process (__test__/console-harness.cjs) and report JSON back here.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CORPUS, NEWEST_LTS_MAJOR, PROBE_OUTPUT, PROBES, UNKNOWN_MAJORS } from './console-corpus.mjs';

const HOST_MAJOR = Number(process.versions.node.split('.')[0]);

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

  it(`is checked against the Node it runs under (${process.version}), a major the console follows`, () => {
    expect(report.node).toBe(process.version);
    expect(Object.keys(PROBE_OUTPUT).map(Number)).toContain(HOST_MAJOR);
  });
});

describe('per-major differences (docs/typescript.md#console-output-per-node-major)', () => {
  it(`this Node (${process.version}) prints the documented output of its major`, () => {
    expect(report.probeOracle).toStrictEqual(PROBE_OUTPUT[HOST_MAJOR]);
  });

  for (const major of Object.keys(PROBE_OUTPUT).map(Number)) {
    it(`set to Node ${major}, the console prints what Node ${major} prints`, () => {
      const flavour = report.flavours.find((f) => f.major === major);
      expect(flavour.chosen).toBe(major);
      expect(flavour.output).toStrictEqual(PROBE_OUTPUT[major]);
    });
  }

  it('every documented difference is one: no two majors print the same', () => {
    const outputs = Object.values(PROBE_OUTPUT).map((o) => JSON.stringify(o));
    expect(new Set(outputs).size).toBe(outputs.length);
    expect(PROBES.length).toBe(3);
  });

  it(`a major it does not know follows the newest LTS (${NEWEST_LTS_MAJOR})`, () => {
    const unknown = report.flavours.filter((f) => UNKNOWN_MAJORS.includes(f.major));
    expect(unknown).toHaveLength(UNKNOWN_MAJORS.length);
    for (const flavour of unknown) {
      expect([flavour.major, flavour.chosen]).toStrictEqual([flavour.major, NEWEST_LTS_MAJOR]);
      expect(flavour.output).toStrictEqual(PROBE_OUTPUT[NEWEST_LTS_MAJOR]);
    }
  });
});

describe('console parity with Node util.formatWithOptions / Console', () => {
  for (const r of report.results) {
    it(r.name, () => {
      expect(typeof r.oracle === 'string' && r.oracle.startsWith('<<case threw')).toBe(false);
      // A case whose source does not compile would "match" by throwing the same in both worlds.
      expect(JSON.stringify(r.oracle)).not.toMatch(/<<threw SyntaxError/);
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
