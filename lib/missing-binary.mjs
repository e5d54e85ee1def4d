// Explains why the compiled addon could not be loaded. The addon ships in one npm package per
// platform (`code-runtime-native-<platform>-<arch>[-<abi>]`), which npm installs through the root
// package's `optionalDependencies` on the matching platform only. The napi-rs loader's own message
// ("Cannot find native binding", an npm bug link, a wasm32-wasi fallback this project does not
// ship) does not say which package that is or why it is absent; this does.
import { createRequire } from 'node:module'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const packageRoot = fileURLToPath(new URL('..', import.meta.url))

/** glibc version, 'musl', or undefined off Linux. */
function detectLibc() {
  if (process.platform !== 'linux') return undefined
  const header = process.report?.getReport?.()?.header
  return header?.glibcVersionRuntime ? `glibc ${header.glibcVersionRuntime}` : 'musl'
}

/** The napi-rs platform suffix for this machine, e.g. `linux-x64-gnu`, `darwin-arm64`. */
export function platformSuffix({ platform, arch, libc }) {
  if (platform === 'linux') {
    if (arch === 'arm') return `linux-arm-${libc === 'musl' ? 'musleabihf' : 'gnueabihf'}`
    return `linux-${arch}-${libc === 'musl' ? 'musl' : 'gnu'}`
  }
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

function firstMessage(error) {
  return error && typeof error.message === 'string' ? error.message.split('\n')[0] : String(error)
}

/**
 * The error to throw instead of the loader's `error`. `facts` override what is detected (the
 * platform, the root package's manifest and directory); the real loader path passes none.
 */
export function explainLoadFailure(error, facts = {}) {
  const platform = facts.platform ?? process.platform
  const arch = facts.arch ?? process.arch
  const libc = 'libc' in facts ? facts.libc : detectLibc()
  const root = facts.root ?? packageRoot
  const manifest = facts.manifest ?? JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const suffix = platformSuffix({ platform, arch, libc: libc?.startsWith('glibc') ? 'glibc' : libc })
  const name = `${manifest.name}-${suffix}`
  const machine = `${platform} ${arch}${libc ? ` (${libc})` : ''}`
  const optional = manifest.optionalDependencies ?? {}
  const shipped = Object.keys(optional).filter((dep) => dep.startsWith(`${manifest.name}-`))
  let message
  if (process.env.NAPI_RS_NATIVE_LIBRARY_PATH) {
    message =
      `NAPI_RS_NATIVE_LIBRARY_PATH is set to ${process.env.NAPI_RS_NATIVE_LIBRARY_PATH}, and that addon did not load: ` +
      `${firstMessage(error.cause ?? error)}. Unset it to load ${name}.`
  } else if (shipped.length === 0) {
    // A source checkout: package.json gets its optionalDependencies only at release (napi prepublish).
    const built = `${manifest.napi?.binaryName ?? manifest.name}.${suffix}.node`
    message = existsSync(join(root, 'Cargo.toml'))
      ? `the addon ${built} is not built in this source checkout (${root}). Build it with \`npm run build\` ` +
        '(needs a Rust toolchain; see "Build from source and test" in the README).'
      : `no compiled addon for ${machine}: ${manifest.name}@${manifest.version} declares no platform packages in ` +
        'optionalDependencies, so it was not published by the release workflow. Install a released version.'
  } else if (!(name in optional)) {
    message =
      `${manifest.name}@${manifest.version} has no prebuilt binary for ${machine}: it ships ${shipped.join(', ')} ` +
      `(its optionalDependencies), and ${name} is not one of them. Use one of those platforms, or build from a ` +
      'source checkout (`npm install` there builds the addon with Rust).'
  } else {
    const localRequire = createRequire(join(root, 'index.js'))
    let installedAt
    try {
      installedAt = dirname(localRequire.resolve(`${name}/package.json`))
    } catch {
      installedAt = undefined
    }
    if (installedAt === undefined) {
      message =
        `the platform package ${name}@${optional[name]} is not installed. It holds the compiled addon for ` +
        `${machine}, and npm installs it only through ${manifest.name}'s optionalDependencies entry ` +
        `"${name}": "${optional[name]}", so it is missing when optional dependencies were omitted ` +
        '(`--omit=optional`, `--no-optional`, `omit=optional` in an .npmrc) or when the ' +
        'lockfile was written on another platform without it. Install it: ' +
        `\`npm install ${name}@${optional[name]}\`, or reinstall without omitting optional dependencies.`
    } else {
      let loadError
      try {
        localRequire(name)
      } catch (e) {
        loadError = e
      }
      message =
        `the platform package ${name} is installed (${installedAt}) but its addon did not load on ${machine}: ` +
        `${firstMessage(loadError ?? error)}`
    }
  }
  const explained = new Error(`code-runtime-native: ${message}`)
  explained.code = 'ERR_CODE_RUNTIME_NATIVE_BINARY'
  explained.cause = error
  return explained
}
