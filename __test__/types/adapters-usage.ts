// Compiled with `tsc --strict` by seam.test.mjs: the framework adapters' own declarations
// (structural, they need no framework installed) describe real usage.
import { Context } from 'cordis'
import { CodeRuntimeTransport, type MastraCodeModeResult } from 'code-runtime-native/mastra'
import { createCodeRuntimeDriver, type TanStackExecutionResult } from 'code-runtime-native/tanstack'
import { CodeRuntimeExecutor, sanitizeToolName, type CloudflareExecuteResult } from 'code-runtime-native/cloudflare'
import { IsolatePtcRuntime } from 'code-runtime-native'

export async function adapterUsage(ctx: Context): Promise<string> {
  await ctx.plugin(IsolatePtcRuntime, { computeMs: 1000 })
  const transport = new CodeRuntimeTransport({ runtime: ctx.ptcRuntime })
  const sandboxFree: false = transport.requiresSandbox
  const mastra: MastraCodeModeResult = await transport.run({
    program: 'return await external_x({})',
    toolIds: ['x'],
    dispatch: async (tool: string, args: unknown) => ({ tool, args }),
    timeout: 30000,
    abortSignal: new AbortController().signal,
  })
  const line: number | undefined = mastra.error?.line

  const driver = createCodeRuntimeDriver({ config: { computeMs: 1000 }, timeout: 5000, memoryLimit: 64 })
  const context = await driver.createContext({
    bindings: { external_x: { name: 'external_x', description: 'x', inputSchema: {}, execute: async (args: unknown) => args } },
    timeout: 1000,
    memoryLimit: 32,
  })
  const tanstack: TanStackExecutionResult<{ n: number }> = await context.execute<{ n: number }>('return { n: 1 }')
  const n: number | undefined = tanstack.value?.n
  await context.dispose()
  await driver.dispose()

  const executor = new CodeRuntimeExecutor({ timeout: 1000, signal: AbortSignal.timeout(5000) })
  const cloudflare: CloudflareExecuteResult = await executor.execute('async () => codemode.x(1, 2)', [
    { name: 'codemode', fns: { x: async (...args: unknown[]) => args.length }, prelude: 'codemode.y = () => 1' },
  ])
  const error: string | undefined = cloudflare.error
  await executor.dispose()
  await transport.dispose()
  // @ts-expect-error a borrowed runtime takes no config of its own
  void new CodeRuntimeTransport({ runtime: ctx.ptcRuntime, config: { computeMs: 1 } })
  return `${sandboxFree} ${line} ${n} ${error} ${sanitizeToolName('get-weather')}`
}
