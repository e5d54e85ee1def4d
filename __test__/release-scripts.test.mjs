// The release scripts on a staged copy of the package: scripts/fill-platform-packages.mjs fills a
// platform package with its `.node` (napi artifacts) and any extra per-platform file, and
// `npm version` keeps every platform package's version in step (napi version).
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { fillPlatformPackages } from '../scripts/fill-platform-packages.mjs'
import { PLATFORM_FILES } from '../scripts/platform-files.mjs'
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

  it('copies the .node and an extra per-platform file into the package and its files, and npm packs both', () => {
    work = mkdtempSync(join(tmpdir(), 'crn-fill-'))
    const stage = stageRelease(join(work, 'release'))
    const artifacts = stageArtifacts(join(work, 'artifacts'), { 'sandbox-stub': { content: '#!/bin/sh\necho sandbox\n', mode: 0o755 } })
    const filled = fillPlatformPackages({
      root: stage.dir,
      artifacts,
      configPath: stage.config,
      table: { [TARGET]: ['sandbox-stub'] },
      quiet: true,
    })
    expect(filled).toEqual([`${TARGET}/sandbox-stub`])
    const dir = join(stage.dir, 'npm', TARGET)
    expect(manifest(stage, TARGET).files).toEqual([`code-runtime-native.${TARGET}.node`, 'sandbox-stub'])
    expect(statSync(join(dir, 'sandbox-stub')).mode & 0o777).toBe(0o755)
    const [packed] = JSON.parse(npm(['pack', '--dry-run', '--json'], dir))
    const files = Object.fromEntries(packed.files.map((f) => [f.path, f.mode]))
    expect(Object.keys(files).sort()).toEqual(['README.md', `code-runtime-native.${TARGET}.node`, 'package.json', 'sandbox-stub'])
    expect(files['sandbox-stub'] & 0o111).toBe(0o111)
  }, 120_000)

  it('fails, naming the file and where it looked, when a listed extra file was not built', () => {
    work = mkdtempSync(join(tmpdir(), 'crn-fill-'))
    const stage = stageRelease(join(work, 'release'))
    const artifacts = stageArtifacts(join(work, 'artifacts'))
    expect(() =>
      fillPlatformPackages({ root: stage.dir, artifacts, configPath: stage.config, table: { [TARGET]: ['sandbox-stub'] }, quiet: true }),
    ).toThrow(`${TARGET}: sandbox-stub is listed in scripts/platform-files.mjs but is not in ${join(artifacts, `bindings-${TARGET}`)}`)
  }, 120_000)
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
