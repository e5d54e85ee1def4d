// The release flow of .github/workflows/release.yml's publish job, run here against a test
// registry: stage the package as npm packs it, fill the platform packages from an artifacts
// folder (scripts/fill-platform-packages.mjs: `napi artifacts` + extra files), `napi prepublish`
// (writes the root's optionalDependencies, publishes the platform packages), `npm publish`.
//
// Only this machine's target (linux-x64-gnu here) is built, so the napi targets are restricted to it through a
// napi config file (`--config-path`); the workflow runs the same steps with all five targets.
import { execFileSync } from 'node:child_process'
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { platformSuffix } from '../../lib/missing-binary.mjs'
import { fillPlatformPackages, napiCli } from '../../scripts/fill-platform-packages.mjs'

export const repo = fileURLToPath(new URL('../..', import.meta.url))
const TRIPLES = {
  'linux-x64-gnu': 'x86_64-unknown-linux-gnu',
  'linux-arm64-gnu': 'aarch64-unknown-linux-gnu',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64-msvc': 'x86_64-pc-windows-msvc',
}
/** This machine's napi target (the one whose `.node` the build left in the repository root). */
export const TARGET = platformSuffix({
  platform: process.platform,
  arch: process.arch,
  libc: process.platform === 'linux' && !process.report.getReport().header.glibcVersionRuntime ? 'musl' : 'glibc',
})
export const TRIPLE = TRIPLES[TARGET]
const napi = napiCli()

/** npm with `env` on top of this process's environment; stdout, or an error carrying stderr. */
export function npm(args, cwd, env = {}) {
  try {
    return execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    throw new Error(`npm ${args.join(' ')} (in ${cwd}) failed:\n${error.stderr || error.message}`)
  }
}

/** The environment that points npm at the test registry (and only there). */
export function registryEnv(registry) {
  return { npm_config_userconfig: registry.npmrc, npm_config_registry: registry.url, npm_config_update_notifier: 'false' }
}

/**
 * PATH without any folder that holds cargo, rustc or rustup: a user's machine with no Rust.
 * Throws if that would also remove node or npm.
 */
export function pathWithoutRust(path = process.env.PATH) {
  const has = (dir, name) => {
    try {
      return readdirSync(dir).includes(name)
    } catch {
      return false
    }
  }
  const kept = path.split(delimiter).filter((dir) => !['cargo', 'rustc', 'rustup'].some((name) => has(dir, name)))
  if (!kept.some((dir) => has(dir, 'node')) || !kept.some((dir) => has(dir, 'npm'))) {
    throw new Error(`cannot hide Rust from PATH: node or npm lives in the same folder as cargo/rustc (${path})`)
  }
  return kept.join(delimiter)
}

/**
 * Stages the root package as `npm pack` ships it, plus npm/, in `dir`; `version` (default the
 * checkout's) is written into the root and every platform package, as `npm version` would.
 */
export function stageRelease(dir, { version } = {}) {
  mkdirSync(dir, { recursive: true })
  const tarball = npm(['pack', '--silent', '--ignore-scripts', '--pack-destination', dir], repo).trim().split('\n').pop()
  execFileSync('tar', ['xzf', join(dir, tarball), '-C', dir, '--strip-components=1'])
  cpSync(join(repo, 'npm'), join(dir, 'npm'), { recursive: true })
  if (version) {
    for (const manifest of [join(dir, 'package.json'), ...readdirSync(join(dir, 'npm')).map((t) => join(dir, 'npm', t, 'package.json'))]) {
      writeFileSync(manifest, `${JSON.stringify({ ...JSON.parse(readFileSync(manifest, 'utf8')), version }, null, 2)}\n`)
    }
  }
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const config = join(dir, 'napi-release-here.json')
  writeFileSync(config, JSON.stringify({ ...pkg.napi, targets: [TRIPLE] }))
  return { dir, config, pkg }
}

/**
 * The build job's artifact for this machine's target as the publish job downloads it: gathered as
 * the workflow gathers it (scripts/collect-platform-artifact.mjs: the release `.node` and the
 * platform's extra files such as the sandbox helper), plus `extras`, then moved between jobs as
 * actions/upload-artifact and download-artifact move it (transferArtifact: modes dropped).
 */
export function stageArtifacts(dir, extras = {}) {
  const collected = join(dir, 'collected')
  execFileSync(process.execPath, [join(repo, 'scripts', 'collect-platform-artifact.mjs'), TARGET, TRIPLE, collected], {
    cwd: repo,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  for (const [name, { content, mode }] of Object.entries(extras)) {
    writeFileSync(join(collected, name), content)
    chmodSync(join(collected, name), mode)
  }
  transferArtifact(collected, join(dir, `bindings-${TARGET}`))
  rmSync(collected, { recursive: true })
  return dir
}

/**
 * What an Actions artifact keeps of a folder: the bytes of each file, no modes. Every file
 * arrives as a new file of mode 0644, as download-artifact writes it. Returns the files' names.
 */
export function transferArtifact(from, to) {
  mkdirSync(to, { recursive: true })
  const names = readdirSync(from)
  for (const name of names) {
    writeFileSync(join(to, name), readFileSync(join(from, name)), { mode: 0o644 })
    chmodSync(join(to, name), 0o644)
  }
  return names
}

/**
 * Runs the publish job's steps in a staged release against `registry`, under dist-tag `tag`.
 * `tamper(platformDir)` runs between filling this target's platform package and publishing it.
 */
export function publishRelease(stage, artifacts, registry, { tag = 'latest', tamper } = {}) {
  fillPlatformPackages({ root: stage.dir, artifacts, configPath: stage.config, quiet: true })
  tamper?.(join(stage.dir, 'npm', TARGET))
  const env = { ...registryEnv(registry), NPM_CONFIG_TAG: tag }
  try {
    execFileSync(process.execPath, [napi, 'prepublish', '--cwd', stage.dir, '--config-path', stage.config, '-t', 'npm', '--no-gh-release'], {
      cwd: stage.dir,
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } catch (error) {
    throw new Error(`napi prepublish failed:\n${error.stdout}\n${error.stderr}`)
  }
  npm(['publish', '--ignore-scripts'], stage.dir, env)
}
