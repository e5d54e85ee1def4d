// lib/missing-binary.mjs: what a failed addon load says, for each reason it can fail. Each case
// builds the package layout on disk (a root package, maybe a platform package) and explains a
// real loader failure; the end-to-end case (`npm install --omit=optional` from a registry) is in
// packaging.test.mjs.
import { createRequire } from 'node:module'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { explainLoadFailure, platformSuffix } from '../lib/missing-binary.mjs'

const released = {
  name: 'code-runtime-native',
  version: '1.2.3',
  napi: { binaryName: 'code-runtime-native' },
  optionalDependencies: {
    'code-runtime-native-linux-x64-gnu': '1.2.3',
    'code-runtime-native-linux-arm64-gnu': '1.2.3',
    'code-runtime-native-darwin-x64': '1.2.3',
    'code-runtime-native-darwin-arm64': '1.2.3',
    'code-runtime-native-win32-x64-msvc': '1.2.3',
  },
}

let dirs = []
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  dirs = []
})

/** A root package folder holding `manifest`; the loader error is what index.js would throw. */
function rootPackage(manifest) {
  const root = mkdtempSync(join(tmpdir(), 'crn-missing-'))
  dirs.push(root)
  writeFileSync(join(root, 'package.json'), JSON.stringify(manifest))
  writeFileSync(join(root, 'index.js'), "throw new Error('Cannot find native binding.')")
  let loaderError
  try {
    createRequire(join(root, 'x.js'))('./index.js')
  } catch (error) {
    loaderError = error
  }
  return { root, loaderError }
}

describe('platformSuffix', () => {
  it('follows the napi-rs package names', () => {
    expect(platformSuffix({ platform: 'linux', arch: 'x64', libc: 'glibc' })).toBe('linux-x64-gnu')
    expect(platformSuffix({ platform: 'linux', arch: 'arm64', libc: 'musl' })).toBe('linux-arm64-musl')
    expect(platformSuffix({ platform: 'darwin', arch: 'arm64' })).toBe('darwin-arm64')
    expect(platformSuffix({ platform: 'win32', arch: 'x64' })).toBe('win32-x64-msvc')
  })
})

describe('explainLoadFailure', () => {
  it('keeps the loader error as the cause and a stable code', () => {
    const { root, loaderError } = rootPackage(released)
    const error = explainLoadFailure(loaderError, { root, platform: 'linux', arch: 'x64', libc: 'glibc 2.36' })
    expect(error.code).toBe('ERR_CODE_RUNTIME_NATIVE_BINARY')
    expect(error.cause).toBe(loaderError)
  })

  it('a platform the release has no package for: names the platform and lists what ships', () => {
    const { root, loaderError } = rootPackage(released)
    const { message } = explainLoadFailure(loaderError, { root, platform: 'linux', arch: 'x64', libc: 'musl' })
    expect(message).toBe(
      'code-runtime-native: code-runtime-native@1.2.3 has no prebuilt binary for linux x64 (musl): it ships ' +
        'code-runtime-native-linux-x64-gnu, code-runtime-native-linux-arm64-gnu, code-runtime-native-darwin-x64, ' +
        'code-runtime-native-darwin-arm64, code-runtime-native-win32-x64-msvc (its optionalDependencies), and ' +
        'code-runtime-native-linux-x64-musl is not one of them. Use one of those platforms, or build from a source ' +
        'checkout (`npm install` there builds the addon with Rust).',
    )
  })

  it('a supported platform whose package is absent: names it, its optionalDependencies entry and how to install it', () => {
    const { root, loaderError } = rootPackage(released)
    const { message } = explainLoadFailure(loaderError, { root, platform: 'darwin', arch: 'arm64', libc: undefined })
    expect(message).toContain('the platform package code-runtime-native-darwin-arm64@1.2.3 is not installed')
    expect(message).toContain('compiled addon for darwin arm64,')
    expect(message).toContain('optionalDependencies entry "code-runtime-native-darwin-arm64": "1.2.3"')
    expect(message).toContain('`npm install code-runtime-native-darwin-arm64@1.2.3`')
  })

  it('an installed platform package whose addon does not load: says where it is and the loader error', () => {
    const { root, loaderError } = rootPackage(released)
    const platformDir = join(root, 'node_modules', 'code-runtime-native-linux-x64-gnu')
    mkdirSync(platformDir, { recursive: true })
    writeFileSync(join(platformDir, 'package.json'), JSON.stringify({ name: 'code-runtime-native-linux-x64-gnu', main: 'addon.node' }))
    writeFileSync(join(platformDir, 'addon.node'), 'not an ELF file')
    const { message } = explainLoadFailure(loaderError, { root, platform: 'linux', arch: 'x64', libc: 'glibc 2.36' })
    expect(message).toContain(`the platform package code-runtime-native-linux-x64-gnu is installed (${platformDir})`)
    expect(message).toContain('did not load on linux x64 (glibc 2.36): ')
    expect(message).toMatch(/addon\.node: (invalid ELF header|file too short)/)
  })

  it('a source checkout without a build: says to run npm run build', () => {
    const { name, version, napi } = released
    const { root, loaderError } = rootPackage({ name, version, napi })
    writeFileSync(join(root, 'Cargo.toml'), '[package]\n')
    const { message } = explainLoadFailure(loaderError, { root, platform: 'linux', arch: 'x64', libc: 'glibc 2.36' })
    expect(message).toBe(
      `code-runtime-native: the addon code-runtime-native.linux-x64-gnu.node is not built in this source checkout (${root}). ` +
        'Build it with `npm run build` (needs a Rust toolchain; see "Build from source and test" in the README).',
    )
  })
})
