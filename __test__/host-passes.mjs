// The two passes every kernel-layer suite runs: this process's user (root on CI) and an
// unprivileged user, each with a host process of its own (__test__/sandbox-host.mjs) in a private
// directory, since users' machines vary and the layers differ for root.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { runAs, unprivilegedPackage } from './process-helpers.mjs'
import { PYTHON } from './python-helpers.mjs'

export const REPO = fileURLToPath(new URL('..', import.meta.url))
export const ROOT = process.getuid() === 0

/** `{ name, uid, gid, own }` of each pass. */
export function passes() {
  const uid = ROOT ? 65534 : process.getuid()
  const gid = ROOT ? 65534 : process.getgid()
  return [
    { name: `as this process's user (uid ${process.getuid()})`, uid: process.getuid(), gid: process.getgid(), own: true },
    { name: 'as an unprivileged user, in a host process of its own', uid, gid, own: false },
  ]
}

/** A private directory under `tmp` for one pass, and how to start its host there. */
export function stage(pass, tmp) {
  const dir = fs.mkdtempSync(path.join(tmp, 'pass-'))
  fs.chmodSync(tmp, 0o711)
  fs.chownSync(dir, pass.uid, pass.gid)
  if (pass.own) {
    return { dir, node: process.execPath, script: path.join(REPO, '__test__', 'sandbox-host.mjs'), python: PYTHON }
  }
  const { pkg, node } = unprivilegedPackage(REPO, dir, ['__test__/sandbox-host.mjs'])
  // That user cannot reach an interpreter under /root: the system's.
  return { dir, node, script: path.join(pkg, '__test__', 'sandbox-host.mjs'), python: '/usr/bin/python3' }
}

/** The host's whole environment: a PATH and the pass's directory as its TMPDIR. */
export function hostEnv(dir) {
  return { PATH: '/usr/bin:/bin', TMPDIR: dir }
}

/** Plays `scenario` in the pass's host; its JSON line. */
export async function play(pass, where, scenario) {
  const { code, stdout, stderr } = await runAs(where.node, where.script, {
    uid: pass.uid,
    gid: pass.gid,
    cwd: where.dir,
    env: hostEnv(where.dir),
    args: [scenario, JSON.stringify({ python: where.python })],
  })
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
  return JSON.parse(stdout)
}
