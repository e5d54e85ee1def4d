// Compiled with `tsc --strict` by seam.test.mjs: the `ctx.ptcRuntime` types against real usage and
// against the host's own published seam (`@deepseek-ai/dsh-ptc-runtime`).
import { Context } from 'cordis'
import { Context as HostContext } from '@deepseek-ai/cordis'
import { PtcRuntime } from '@deepseek-ai/dsh-ptc-runtime'
import type * as Host from '@deepseek-ai/dsh-ptc-runtime'
import PtcSubpath, { PtcService, filePlan } from 'code-runtime-native/ptc'
import {
  type PtcRunFailureKind,
  type PtcRunRequest,
  type PtcRunResult,
  type PtcRunSpec,
  IsolatePtcRuntime,
  PythonPtcRuntime,
  definePtcRuntimes,
} from 'code-runtime-native'

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
// The kinds are exactly the host's eight.
export const kindsAreTheHosts: Same<PtcRunFailureKind, Host.PtcRunFailure['kind']> = true

export async function ptcUsage(ctx: Context, host: HostContext): Promise<string> {
  await ctx.plugin(IsolatePtcRuntime, { computeMs: 1000, timeoutMs: 5000, maxTimeoutMs: 60000, maxMessageBytes: 1 << 20 })
  const runtime = ctx.ptcRuntime
  const request: PtcRunRequest = {
    program: 'return 1',
    bindings: [{ global: 'tools', functions: { echo: async (x: unknown) => x as number } }],
    timeoutMs: null,
    sandboxPolicy: { mode: 'workspace-write', workspaceRoot: '/tmp' },
  }
  const spec: PtcRunSpec = runtime.resolve(request)
  const result: PtcRunResult = await runtime.run(spec)
  // Our results are the host's results, and the host's requests are ours.
  const asHost: Host.PtcRunResult = result
  const hostRequest: Host.PtcRunRequest = { program: 'return 1', bindings: [], timeoutMs: 1000 }
  const ours: PtcRunRequest = hostRequest
  const { timeout, sandboxMode, executionInstructions } = runtime
  const described = `default ${timeout.defaultMs} ms, capped at ${timeout.maxMs} ms; ${sandboxMode ?? 'no policy'}`
  // On the host's own abstract class, registered as the host's `ctx.ptcRuntime`.
  const { IsolatePtcRuntime: HostIsolate, PythonPtcRuntime: HostPython } = definePtcRuntimes(PtcRuntime)
  await host.plugin(HostIsolate, { containment: 'thread' })
  const hosted: PtcRuntime = host.ptcRuntime
  const hostedResult: Host.PtcRunResult = await hosted.run(hosted.resolve(hostRequest))
  const python = new HostPython(host, { cpuSeconds: 5 })
  const language: 'python' = python.language
  const plan = filePlan({ mode: 'read-only', workspaceRoot: '/w' }, '/w')
  const same: boolean = PtcSubpath === IsolatePtcRuntime && PythonPtcRuntime !== undefined && PtcService !== undefined
  return `${asHost.logs.length} ${ours.program} ${described} ${executionInstructions.length} ${hostedResult.logs.length} ${language} ${plan.network} ${same}`
}
