// The release scripts on a staged copy of the package: scripts/fill-platform-packages.mjs fills a
// platform package with its `.node` (napi artifacts) and any extra per-platform file, with the
// mode scripts/platform-files.mjs states, from an artifact that lost its modes in transfer as
// Actions artifacts do; scripts/restore-platform-modes.mjs does the same for the test jobs; and
// `npm version` keeps every platform package's version in step (napi version).
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { fillPlatformPackages } from '../scripts/fill-platform-packages.mjs'
import { PLATFORM_FILES, platformFiles } from '../scripts/platform-files.mjs'
import { npm, repo, stageArtifacts, stageRelease, TARGET } from './registry/release.mjs'

let work
afterEach(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

const manifest = (stage, target) => JSON.parse(readFileSync(join(stage.dir, 'npm', target, 'package.json'), 'utf8'))

describe('fill-platform-packages', () => {
  it('has a platform package directory for every napi target', () => {
    const { napi } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
    expect(napi.targets).toHaveLength(5)
    expect(readdirSync(join(repo, 'npm')).sort()).toEqual(Object.keys(PLATFORM_FILES).sort())
  })

  it('copies the .node and an extra per-platform file into the package and its files with the mode the table states, and npm packs both', () => {
    work = mkdtempSync(join(tmpdir(), 'crn-fill-'))
    const stage = stageRelease(join(work, 'release'))
    const artifacts = stageArtifacts(join(work, 'artifacts'), { 'sandbox-stub': { content: '#!/bin/sh\necho sandbox\n', mode: 0o755 } })
    // The artifact as the publish job downloads it: the execute bit is gone.
    expect(statSync(join(artifacts, `bindings-${TARGET}`, 'sandbox-stub')).mode & 0o777).toBe(0o644)
    const filled = fillPlatformPackages({
      root: stage.dir,
      artifacts,
      configPath: stage.config,
      table: { [TARGET]: [{ name: 'sandbox-stub', mode: 0o755 }] },
      quiet: true,
    })
    expect(filled).toEqual([`${TARGET}/sandbox-stub`])
    const dir = join(stage.dir, 'npm', TARGET)
    expect(manifest(stage, TARGET).files).toEqual([`code-runtime-native.${TARGET}.node`, 'sandbox-stub'])
    expect(statSync(join(dir, 'sandbox-stub')).mode & 0o777).toBe(0o755)
    expect(execFileSync(join(dir, 'sandbox-stub'), { encoding: 'utf8' })).toBe('sandbox\n')
    const [packed] = JSON.parse(npm(['pack', '--dry-run', '--json'], dir))
    const files = Object.fromEntries(packed.files.map((f) => [f.path, f.mode]))
    expect(Object.keys(files).sort()).toEqual(['README.md', `code-runtime-native.${TARGET}.node`, 'package.json', 'sandbox-stub'])
    expect(files['sandbox-stub'] & 0o111).toBe(0o111)
  }, 120_000)

  it('fails, naming the file and where it looked, when a listed extra file was not built', () => {
    work = mkdtempSync(join(tmpdir(), 'crn-fill-'))
    const stage = stageRelease(join(work, 'release'))
    const artifacts = stageArtifacts(join(work, 'artifacts'))
    const table = { [TARGET]: [{ name: 'sandbox-stub', mode: 0o755 }] }
    expect(() => fillPlatformPackages({ root: stage.dir, artifacts, configPath: stage.config, table, quiet: true })).toThrow(
      `${TARGET}: sandbox-stub is listed in scripts/platform-files.mjs but is not in ${join(artifacts, `bindings-${TARGET}`)}`,
    )
  }, 120_000)

  it('refuses a table entry whose mode is not stated', () => {
    expect(() => platformFiles(TARGET, { [TARGET]: ['sandbox-stub'] })).toThrow(
      `${TARGET}: every entry of scripts/platform-files.mjs needs a name and an explicit mode, got "sandbox-stub"`,
    )
  })

  it("states the sandbox helper executable, its static build and the Python template's library on both Linux targets, and no extra file elsewhere", () => {
    for (const target of ['linux-x64-gnu', 'linux-arm64-gnu']) {
      expect(platformFiles(target)).toEqual([
        { name: 'code-runtime-native-sandbox', mode: 0o755 },
        { name: 'code-runtime-native-sandbox-roles', mode: 0o755 },
        { name: 'libcode_runtime_native_python.so', mode: 0o644 },
      ])
    }
    for (const target of ['darwin-x64', 'darwin-arm64', 'win32-x64-msvc']) expect(platformFiles(target)).toEqual([])
  })
})

describe('restore-platform-modes (the test jobs, after download-artifact)', () => {
  const restore = (dir, target = TARGET) =>
    spawnSync(process.execPath, [join(repo, 'scripts', 'restore-platform-modes.mjs'), target, dir], { encoding: 'utf8' })

  it('makes the downloaded helper executable again, and it starts', () => {
    work = mkdtempSync(join(tmpdir(), 'crn-restore-'))
    const folder = join(stageArtifacts(work), `bindings-${TARGET}`)
    const helper = join(folder, 'code-runtime-native-sandbox')
    expect(statSync(helper).mode & 0o777).toBe(0o644)
    expect(spawnSync(helper).error?.code).toBe('EACCES')
    const { status, stdout, stderr } = restore(folder)
    expect({ status, stdout, stderr }).toEqual({
      status: 0,
      stdout: 'code-runtime-native-sandbox: mode 755\ncode-runtime-native-sandbox-roles: mode 755\nlibcode_runtime_native_python.so: mode 644\n',
      stderr: '',
    })
    expect(statSync(helper).mode & 0o777).toBe(0o755)
    // Run by hand, the helper refuses with its own message: it started.
    const started = spawnSync(helper, { encoding: 'utf8' })
    expect({ status: started.status, stderr: started.stderr }).toEqual({
      status: 125,
      stderr: 'code-runtime-native-sandbox: this helper is started by the code-runtime-native addon, not by hand\n',
    })
  }, 120_000)

  it('fails, naming the file and the folder, when the artifact lacks a listed file', () => {
    work = mkdtempSync(join(tmpdir(), 'crn-restore-'))
    const { status, stderr } = restore(work)
    expect({ status, stderr }).toEqual({
      status: 1,
      stderr: `${TARGET}: code-runtime-native-sandbox (scripts/platform-files.mjs) is not in ${work}, so its mode cannot be set\n`,
    })
  })

  it('has nothing to do for a target without extra files', () => {
    work = mkdtempSync(join(tmpdir(), 'crn-restore-'))
    expect(restore(work, 'win32-x64-msvc')).toMatchObject({ status: 0, stdout: '', stderr: '' })
  })
})

describe('npm version', () => {
  it('moves every platform package to the new version (napi version)', () => {
    work = mkdtempSync(join(tmpdir(), 'crn-version-'))
    const stage = stageRelease(join(work, 'release'))
    // The `version` script runs `napi version` from this repository's devDependencies.
    const PATH = `${join(repo, 'node_modules', '.bin')}${delimiter}${process.env.PATH}`
    npm(['version', '9.8.7', '--no-git-tag-version'], stage.dir, { PATH })
    expect(JSON.parse(readFileSync(join(stage.dir, 'package.json'), 'utf8')).version).toBe('9.8.7')
    for (const target of Object.keys(PLATFORM_FILES)) expect(manifest(stage, target).version).toBe('9.8.7')
  }, 120_000)
})
