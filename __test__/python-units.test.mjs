// py/runner.py's own unit tests (__test__/py/test_runner.py), run with the interpreter the Python
// suites use: its pure parts (the program's wrapper, the limits' clamp, the message caps, the
// failure's rendering, where a run stopped) and the rule the whole file keeps — no function in it
// reads a global, so a program that rebinds builtins reaches none of the runner's code.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { expect, it } from 'vitest'
import { PYTHON, REPO } from './python-helpers.mjs'

it('py/runner.py passes its unit tests', () => {
  const run = spawnSync(PYTHON, ['-m', 'unittest', 'discover', '-v', '-s', path.join(REPO, '__test__/py')], { cwd: REPO, encoding: 'utf8', timeout: 60_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } })
  const report = `${run.stdout}\n${run.stderr}`
  expect(run.status, report).toBe(0)
  const ran = Number(/Ran (\d+) tests?/.exec(report)?.[1])
  expect(ran).toBeGreaterThanOrEqual(19)
  expect(report).toMatch(/test_no_function_reads_a_global .* ok/)
  expect(report).toMatch(/\nOK\n/)
})
