// Process-table helpers for the isolate runtime's process containment tier (Linux /proc): which
// sandbox processes (`code-runtime-native-sandbox` and whatever runs under it) descend from this
// Node process, and how much memory they hold. Shared by the hostile and soak suites and by the
// benchmarks in bench/.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

export const SANDBOX_NAME = 'code-runtime-native-sandbox'

/** `{ pid, ppid, state, comm }` of every process readable in /proc (a snapshot). */
export function processTable() {
  const table = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const comm = stat.slice(stat.indexOf('(') + 1, close)
      const [state, ppid] = stat.slice(close + 2).split(' ')
      table.push({ pid: Number(name), ppid: Number(ppid), state, comm })
    } catch {
      // The process ended between readdir and read.
    }
  }
  return table
}

/** argv[0] of a process, or '' when it cannot be read (ended, or a zombie). */
function argv0(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]
  } catch {
    return ''
  }
}

/** Whether a process is the sandbox helper: its comm (truncated to 15 bytes) or its argv[0]. */
function isSandbox({ pid, comm }) {
  return comm === SANDBOX_NAME.slice(0, 15) || argv0(pid).endsWith(SANDBOX_NAME)
}

/**
 * Live (non-zombie) descendants of `root` (default: this process), each with `depth` (1 = direct
 * child) and `sandbox` (it or an ancestor below `root` is the sandbox helper).
 */
export function descendants(root = process.pid) {
  const table = processTable()
  const children = new Map()
  for (const p of table) {
    if (!children.has(p.ppid)) children.set(p.ppid, [])
    children.get(p.ppid).push(p)
  }
  const found = []
  const queue = (children.get(root) ?? []).map((p) => ({ ...p, depth: 1, underSandbox: false }))
  while (queue.length > 0) {
    const p = queue.shift()
    const sandbox = p.underSandbox || isSandbox(p)
    if (p.state !== 'Z' && p.state !== 'X') found.push({ pid: p.pid, ppid: p.ppid, comm: p.comm, state: p.state, depth: p.depth, sandbox })
    for (const c of children.get(p.pid) ?? []) queue.push({ ...c, depth: p.depth + 1, underSandbox: sandbox })
  }
  return found
}

/** Every live sandbox process below this Node process (helpers and the programs they run). */
export function sandboxProcesses(root = process.pid) {
  return descendants(root).filter((p) => p.sandbox)
}

/**
 * The top-most sandbox processes: one per supervised sandbox, however many processes the helper
 * forks beneath itself. Each has `tree`, the pids of it and its live descendants.
 */
export function sandboxRoots(root = process.pid) {
  const all = sandboxProcesses(root)
  const byPid = new Map(all.map((p) => [p.pid, p]))
  const rootOf = (p) => {
    while (byPid.has(p.ppid)) p = byPid.get(p.ppid)
    return p.pid
  }
  const trees = new Map()
  for (const p of all) {
    const r = rootOf(p)
    if (!trees.has(r)) trees.set(r, [])
    trees.get(r).push(p.pid)
  }
  return all.filter((p) => !byPid.has(p.ppid)).map((r) => ({ ...r, tree: trees.get(r.pid) }))
}

/** argv[1] of a process ('' when it cannot be read). */
function mode(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1] ?? ''
  } catch {
    return ''
  }
}

/**
 * The sandbox processes that serve runs: each forked by a template (a sandbox process in mode
 * `isolate` or `isolate-forge` that never runs a program), so in that mode itself with a parent in
 * it. Each has `pid` and `ppid` (its template).
 */
export function runProcesses(root = process.pid) {
  const all = sandboxProcesses(root)
  const serving = new Set(all.filter((p) => mode(p.pid).startsWith('isolate')).map((p) => p.pid))
  return all.filter((p) => serving.has(p.pid) && serving.has(p.ppid))
}

/** The templates: sandbox processes in an `isolate` mode that fork the ones serving runs. */
export function templateProcesses(root = process.pid) {
  const all = sandboxProcesses(root)
  const inMode = new Set(all.filter((p) => mode(p.pid).startsWith('isolate')).map((p) => p.pid))
  return all.filter((p) => inMode.has(p.pid) && !inMode.has(p.ppid))
}

/** VmRSS of a process in bytes (0 when it is gone or has no memory, e.g. a zombie). */
export function rssBytes(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) * 1024 : 0
  } catch {
    return 0
  }
}

/** Open file descriptors of this process. */
export function openFds() {
  return fs.readdirSync('/proc/self/fd').length
}

/** The cgroup directories this host made (`code-runtime-native-<pid>-<n>`) that still exist. */
export function ownCgroups(pid = process.pid) {
  const prefix = `code-runtime-native-${pid}-`
  const found = []
  const walk = (dir, depth) => {
    let entries = []
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue
      if (e.name.startsWith(prefix)) found.push(`${dir}/${e.name}`)
      else if (depth > 0) walk(`${dir}/${e.name}`, depth - 1)
    }
  }
  walk('/sys/fs/cgroup', 4)
  return found
}

/** Polls `predicate` every 20 ms until it is true or `ms` elapsed; returns its last value. */
export async function waitFor(predicate, ms = 5000) {
  const end = performance.now() + ms
  for (;;) {
    const value = predicate()
    if (value || performance.now() >= end) return value
    await new Promise((r) => setTimeout(r, 20))
  }
}

/**
 * The package as a user installs it (its JavaScript, the addon, the helper, the runtime
 * dependencies, plus `extra` entries) and the Node binary, copied into `dir` world-readable, so a
 * host process of another user can run it wherever this checkout and this Node live.
 * Returns `{ pkg, node }`.
 */
export function unprivilegedPackage(repo, dir, extra = []) {
  const pkg = path.join(dir, 'pkg')
  for (const entry of ['package.json', 'index.js', 'lib', 'code-runtime-native-sandbox', 'code-runtime-native-sandbox-roles', 'libcode_runtime_native_python.so', ...extra]) {
    fs.cpSync(path.join(repo, entry), path.join(pkg, entry), { recursive: true })
  }
  for (const entry of fs.readdirSync(repo).filter((f) => f.endsWith('.node'))) {
    fs.copyFileSync(path.join(repo, entry), path.join(pkg, entry))
  }
  for (const dep of ['cordis', 'schemastery', 'cosmokit', '@standard-schema']) {
    fs.cpSync(path.join(repo, 'node_modules', dep), path.join(pkg, 'node_modules', dep), { recursive: true, dereference: true })
  }
  const node = path.join(pkg, 'node')
  fs.copyFileSync(process.execPath, node)
  execFileSync('chmod', ['-R', 'a+rX', pkg])
  return { pkg, node }
}

/** Runs `script` (with `args`) with `node` as `uid`/`gid`; resolves `{ code, stdout, stderr }`. */
export function runAs(node, script, { uid, gid, cwd, env, args = [] }) {
  const child = spawn(node, [script, ...args], { uid, gid, cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}
