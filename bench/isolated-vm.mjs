// isolated-vm 5.0.4, the baseline several benchmarks compare against. It is not a dependency of this
// package: it is installed on demand into a cache outside the repository (CRN_BENCH_CACHE, default
// ~/.cache/code-runtime-native/bench) with `npm install --prefix <dir> isolated-vm@5.0.4`, building
// against the Node headers in /usr/include/node when they are there (npm_config_nodedir=/usr;
// prebuilt binaries come from GitHub, which may be unreachable). It needs --no-node-snapshot on
// Node ≥ 20.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
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

/**
 * isolated-vm for a benchmark that compares against it in its own process: installs it, restarts
 * this script with --no-node-snapshot (once) and returns the module. Exits when it cannot be had.
 */
export function isolatedVmHere() {
  if (!process.execArgv.includes('--no-node-snapshot')) {
    const reason = ensureIsolatedVm()
    if (reason) {
      console.error(`isolated-vm is needed for this comparison: ${reason}`)
      process.exit(1)
    }
    const out = spawnSync(process.execPath, ['--no-node-snapshot', ...process.argv.slice(1)], { stdio: 'inherit' })
    process.exit(out.status ?? 1)
  }
  return createRequire(path.join(IVM_DIR, 'package.json'))('isolated-vm')
}

/**
 * One run as a host needs it from isolated-vm: a fresh isolate and context, the program's
 * `console.log` delivered to the host, its result copied out. `{ value, logs }`.
 */
export async function runInIsolatedVm(ivm, program) {
  const isolate = new ivm.Isolate({ memoryLimit: 128 })
  try {
    const context = await isolate.createContext()
    const logs = []
    const log = new ivm.Callback((...parts) => void logs.push(parts.join(' ')))
    const value = await context.evalClosure(`const console = { log: $0 }\nreturn (async () => { ${program} })()`, [log], {
      result: { promise: true, copy: true },
    })
    return { value, logs }
  } finally {
    isolate.dispose()
  }
}
