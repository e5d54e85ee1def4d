// PythonCodeRuntime: placeholder until the Python backend lands (issue 5).
export function definePythonRuntime(Base) {
  return class PythonCodeRuntime extends Base {
    constructor(ctx) {
      super(ctx, 'codeRuntime')
      throw new Error('code-runtime-native: PythonCodeRuntime is not built yet')
    }
  }
}
