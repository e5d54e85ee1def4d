// isolated-vm 5.0.4, the baseline several benchmarks compare against. It is not a dependency of this
// package: it is installed on demand into a cache outside the repository (CRN_BENCH_CACHE, default
// ~/.cache/code-runtime-native/bench) with `npm install --prefix <dir> isolated-vm@5.0.4`, building
// against the Node headers in /usr/include/node when they are there (npm_config_nodedir=/usr;
// prebuilt binaries come from GitHub, which may be unreachable). It needs --no-node-snapshot on
// Node ≥ 20.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const CACHE = process.env.CRN_BENCH_CACHE ?? path.join(os.homedir(), '.cache', 'code-runtime-native', 'bench')
/** The version every comparison names (issue 29's tables were measured against it). */
export const IVM_VERSION = '5.0.4'
export const IVM_DIR = path.join(CACHE, 'isolated-vm')

/** Ensures isolated-vm 5 is installed in the cache; returns the reason when it is not. */
export function ensureIsolatedVm() {
  const pkg = path.join(IVM_DIR, 'node_modules', 'isolated-vm', 'package.json')
  const installed = () => {
    try {
      const { version } = JSON.parse(fs.readFileSync(pkg, 'utf8'))
      return version === IVM_VERSION && fs.existsSync(path.join(IVM_DIR, 'node_modules', 'isolated-vm', 'out', 'isolated_vm.node'))
    } catch {
      return false
    }
  }
  if (installed()) return null
  fs.mkdirSync(IVM_DIR, { recursive: true })
  const env = { ...process.env }
  if (fs.existsSync('/usr/include/node/node.h')) env.npm_config_nodedir = '/usr'
  const args = ['install', '--prefix', IVM_DIR, `isolated-vm@${IVM_VERSION}`, '--no-audit', '--no-fund', '--no-save']
  console.log(`installing isolated-vm into ${IVM_DIR} (npm ${args.join(' ')}${env.npm_config_nodedir ? ', npm_config_nodedir=/usr' : ''}); building it takes about a minute`)
  const out = spawnSync('npm', args, { env, encoding: 'utf8', timeout: 15 * 60 * 1000 })
  if (out.status !== 0 || !installed()) {
    const lines = `${out.stderr ?? ''}\n${out.stdout ?? ''}`.trim().split('\n')
    const errors = lines.filter((l) => /^npm (error|ERR!)/.test(l))
    const tail = (errors.length > 0 ? errors.slice(0, 6) : lines.slice(-8)).join('\n  ')
    return `npm install failed (${out.error?.message ?? `status ${out.status}`}):\n  ${tail}`
  }
  return null
}

