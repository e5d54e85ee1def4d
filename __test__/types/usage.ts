// Compiled with `tsc --strict` by seam.test.mjs: the public types must describe real usage.
import { Context, Service } from 'cordis'
import IsolateRuntime from 'code-runtime-native/isolate'
import PythonRuntime from 'code-runtime-native/python'
import PtcRuntimeSubpath, { PtcService, filePlan, type FilePlan } from 'code-runtime-native/ptc'
import DefaultRuntime, {
  type CodeCallRecord,
  type CodeJournal,
  suspend,
  type CodeRunRequest,
  type CodeRunResult,
  type CodeRunFailureKind,
  defineCodeRuntimes,
  IsolateCodeRuntime,
  PORTABLE_RESERVED_WORDS,
  PythonCodeRuntime,
  type PtcRunFailureKind,
  type PtcRunResult,
  type PtcRunSpec,
  IsolatePtcRuntime,
  PythonPtcRuntime,
  definePtcRuntimes,
} from 'code-runtime-native'

// The failure kinds are exactly the seam's six, whichever file spells them.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const kindsAreTheSeams: Same<
  CodeRunFailureKind,
  'exception' | 'timeout' | 'abort' | 'worker-exit' | 'invalid-output' | 'output-limit'
> = true
export const aKindIsAString: CodeRunFailureKind = 'worker-exit'
// The current seam adds two.
export const ptcKinds: Same<PtcRunFailureKind, CodeRunFailureKind | 'protocol' | 'sandbox-unavailable'> = true

export async function ptcUsage(ctx: Context): Promise<string> {
  await ctx.plugin(IsolatePtcRuntime, { computeMs: 1000, timeoutMs: 5000, cwd: '/tmp', maxMessageBytes: 1 << 20, graceMs: 3000 })
  const spec: PtcRunSpec = ctx.ptcRuntime.resolve({
    program: 'return 1',
    bindings: [],
    timeoutMs: null,
    sandboxPolicy: { mode: 'read-only', workspaceRoot: '/tmp', sessionId: 's' },
  })
  const result: PtcRunResult = await ctx.ptcRuntime.run(spec)
  const enforcement: 'full' | 'partial' | undefined = result.sandbox?.enforcement
  const { defaultMs, maxMs } = ctx.ptcRuntime.timeout
  abstract class HostPtc extends Service {
    constructor(ctx: Context) {
      super(ctx, 'ptcRuntime')
    }
  }
  const { PythonPtcRuntime: Hosted } = definePtcRuntimes(HostPtc)
  const hosted = new Hosted(ctx, { cpuSeconds: 5, maxTimeoutMs: 10000, sandboxMode: 'workspace-write', maxMessageBytes: 4096 })
  // The TypeScript runtime advertises no mode, and its config has none.
  // @ts-expect-error sandboxMode is not a key of the TypeScript runtime
  await ctx.plugin(IsolatePtcRuntime, { sandboxMode: 'read-only' })
  const none: undefined = (ctx.ptcRuntime as InstanceType<typeof IsolatePtcRuntime>).sandboxMode
  const mode: 'read-only' | 'workspace-write' | 'danger-full-access' | undefined = hosted.sandboxMode
  const plan: FilePlan = filePlan({ mode: 'workspace-write', workspaceRoot: '/w' }, '/w')
  const same = PtcRuntimeSubpath === IsolatePtcRuntime && PythonPtcRuntime !== undefined && PtcService !== undefined
  return `${enforcement} ${defaultMs} ${maxMs} ${mode} ${none} ${plan.readWrite.join()} ${same}`
}

export async function usage(ctx: Context): Promise<string> {
  await ctx.plugin(IsolateCodeRuntime, { computeMs: 1000 })
  const request: CodeRunRequest = {
    program: 'return 1',
    bindings: [
      {
        global: 'tools',
        functions: { echo: async (x: unknown) => x as number },
        errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' },
      },
    ],
    onLog: (text: string) => void text,
  }
  const result: CodeRunResult = await ctx.codeRuntime.run(request)
  const kind: CodeRunFailureKind | undefined = result.error?.kind
  const language: 'typescript' | 'python' = ctx.codeRuntime.language
  const same: boolean = DefaultRuntime === IsolateRuntime && PythonRuntime === PythonCodeRuntime
  const config: IsolateCodeRuntime.Config = { maxOutputBytes: 4096 }
  // A tracer is any object with startSpan (an OpenTelemetry Tracer); the stats list the calls.
  const traced: IsolateCodeRuntime.Config = { tracer: { startSpan: () => ({}) }, traceContent: true }
  const calls: readonly CodeCallRecord[] = ctx.codeRuntime.lastRunStats()?.calls ?? []
  const outcomes: Array<'resolved' | 'rejected' | 'abandoned'> = calls.map((call) => call.outcome)
  const counted: number | undefined = ctx.codeRuntime.lastRunStats()?.callCount
  const stoppedLine: number | undefined = ctx.codeRuntime.lastRunStats()?.stoppedAt?.line
  void stoppedLine
  // Durable runs: a binding pauses the run with suspend(); the journal comes back on resume.
  const tools = { global: 'tools', functions: { approve: (): never => { throw suspend({ approval: 7 }) } } }
  const first = await ctx.codeRuntime.runDurable({ program: 'return await tools.approve({})', bindings: [tools] })
  const journal: CodeJournal = first.journal
  const seeded: CodeJournal = { version: 2, seed: '00000000deadbeef', clock: 0, zone: null, calls: [], logs: [] }
  void seeded
  const pausedAt: number | undefined = 'suspended' in first ? first.suspended.seq : undefined
  const resumed = await ctx.codeRuntime.runDurable({ program: 'return await tools.approve({})', bindings: [tools], journal })
  void pausedAt
  void resumed
  void traced
  void outcomes
  void counted
  const reserved: boolean = PORTABLE_RESERVED_WORDS.has('await')
  abstract class HostBase extends Service {
    constructor(ctx: Context, name: string) {
      super(ctx, name)
    }
  }
  const { IsolateCodeRuntime: Hosted } = defineCodeRuntimes(HostBase)
  const hosted = new Hosted(ctx, config)
  const hostedLanguage: 'typescript' = hosted.language
  const python = new PythonCodeRuntime(ctx, { cpuSeconds: 5, pythonBin: 'python3' })
  const executable: string = python.interpreter.executable
  void executable
  return `${kind} ${language} ${same} ${reserved} ${hostedLanguage}`
}
