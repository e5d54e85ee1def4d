// What the AI SDK suites share: code tools disposed after the file.
import { afterAll } from 'vitest'
import { codeRuntimeTool } from 'code-runtime-native/ai-sdk'
import { COMPUTE_MS } from './adapter-helpers.mjs'

/**
 * `codeRuntimeTool` with a small compute budget; every tool it made is disposed, and `suite`
 * checked, once the file's tests ran.
 */
export function codeTools(suite) {
  const open = []
  afterAll(async () => {
    await Promise.all(open.map((created) => created.dispose()))
    suite.check()
  })
  return (options) => {
    const created = codeRuntimeTool({ config: { computeMs: COMPUTE_MS }, ...options })
    open.push(created)
    return created
  }
}
