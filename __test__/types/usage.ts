// Compiled with `tsc --strict` by seam.test.mjs: the public types must describe real usage.
import { Context, Service } from 'cordis'
import IsolateRuntime from 'code-runtime-native/isolate'
import PythonRuntime from 'code-runtime-native/python'
import DefaultRuntime, {
  type CodeRunRequest,
  type CodeRunResult,
  type CodeRunFailureKind,
  defineCodeRuntimes,
  IsolateCodeRuntime,
  PORTABLE_RESERVED_WORDS,
  PythonCodeRuntime,
} from 'code-runtime-native'

// The failure kinds are exactly the seam's six, whichever file spells them.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const kindsAreTheSeams: Same<
  CodeRunFailureKind,
  'exception' | 'timeout' | 'abort' | 'worker-exit' | 'invalid-output' | 'output-limit'
> = true
export const aKindIsAString: CodeRunFailureKind = 'worker-exit'

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
