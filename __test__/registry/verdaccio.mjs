// A real npm registry for the packaging test: verdaccio, on 127.0.0.1, owned by the test.
//
// verdaccio is not a devDependency (it would add ~330 packages to every contributor's `npm ci`).
// It is installed from this folder's package.json and package-lock.json (verdaccio 6.8.0, with
// node-fetch pinned to 2.7.0 so it installs and runs on Node 20) into a cache folder outside the
// repository, once per lockfile: `$CODE_RUNTIME_NATIVE_CACHE` or `~/.cache/code-runtime-native`.
// A clean machine installs it from the npm registry on first use (~20 s).
//
// Our own packages (`code-runtime-native`, `code-runtime-native-*`) live only in this registry;
// everything else (cordis, schemastery, ...) is proxied to the machine's npm registry.
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))

export function cacheRoot() {
  return process.env.CODE_RUNTIME_NATIVE_CACHE || join(homedir(), '.cache', 'code-runtime-native')
}

/** Installs verdaccio into the cache (once per lockfile) and returns its entry script. */
export function installVerdaccio() {
  const lock = readFileSync(join(here, 'package-lock.json'))
  const manifest = readFileSync(join(here, 'package.json'))
  const key = createHash('sha256').update(manifest).update(lock).digest('hex').slice(0, 16)
  const dir = join(cacheRoot(), `verdaccio-${key}`)
  const entry = join(dir, 'node_modules', 'verdaccio', 'bin', 'verdaccio')
  if (existsSync(join(dir, 'installed'))) return entry
  // Install next to the final folder, then rename: an interrupted install never looks complete.
  const staging = `${dir}.partial-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  cpSync(join(here, 'package.json'), join(staging, 'package.json'))
  cpSync(join(here, 'package-lock.json'), join(staging, 'package-lock.json'))
  try {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: staging, stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    rmSync(staging, { recursive: true, force: true })
    throw new Error(`could not install verdaccio (the packaging test's registry) into ${staging}: ${error.stderr || error.message}`)
  }
  writeFileSync(join(staging, 'installed'), `${new Date().toISOString()}\n`)
  rmSync(dir, { recursive: true, force: true })
  try {
    renameSync(staging, dir)
  } catch (error) {
    // Another run finished the same install first: use theirs.
    rmSync(staging, { recursive: true, force: true })
    if (!existsSync(join(dir, 'installed'))) throw error
  }
  return entry
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

function config(dir, port, uplink) {
  return `storage: ${JSON.stringify(join(dir, 'storage'))}
auth:
  htpasswd:
    file: ${JSON.stringify(join(dir, 'htpasswd'))}
    max_users: 10
uplinks:
  npmjs:
    url: ${JSON.stringify(uplink)}
    timeout: 60s
packages:
  'code-runtime-native':
    access: $all
    publish: $authenticated
  'code-runtime-native-*':
    access: $all
    publish: $authenticated
  '**':
    access: $all
    publish: $authenticated
    proxy: npmjs
max_body_size: 500mb
listen: 127.0.0.1:${port}
log: { type: stdout, format: pretty, level: warn }
`
}

async function waitUntilUp(url, child, output) {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited with ${child.exitCode} before listening:\n${output()}`)
    try {
      const res = await fetch(`${url}-/ping`)
      if (res.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`verdaccio did not answer ${url}-/ping within 60 s:\n${output()}`)
}

/**
 * Starts verdaccio under `node` (this process's Node unless given) with its storage in `dir`,
 * creates a user, and returns `{ url, token, npmrc, stop }`: `npmrc` is a user config file that
 * points npm at the registry with the user's token.
 */
export async function startRegistry(dir, { node = process.execPath } = {}) {
  const entry = installVerdaccio()
  mkdirSync(dir, { recursive: true })
  const uplink = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim() || 'https://registry.npmjs.org/'
  let lastError
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    const configPath = join(dir, 'config.yaml')
    writeFileSync(configPath, config(dir, port, uplink))
    const child = spawn(node, [entry, '--config', configPath], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
    let log = ''
    child.stdout.on('data', (d) => (log += d))
    child.stderr.on('data', (d) => (log += d))
    const url = `http://127.0.0.1:${port}/`
    const stop = () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      })
    try {
      await waitUntilUp(url, child, () => log)
    } catch (error) {
      lastError = error
      await stop()
      continue
    }
    const res = await fetch(`${url}-/user/org.couchdb.user:tester`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'tester', password: 'tester-password', type: 'user', roles: [] }),
    })
    const body = await res.json()
    if (!res.ok || typeof body.token !== 'string') {
      await stop()
      throw new Error(`verdaccio refused to create the test user (${res.status}): ${JSON.stringify(body)}`)
    }
    const npmrc = join(dir, 'npmrc')
    writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${body.token}\n`)
    return { url, token: body.token, npmrc, stop, log: () => log }
  }
  throw lastError
}
