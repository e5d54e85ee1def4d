// IsolateCodeRuntime: placeholder while the isolate backend is being built (issue 2).
export function defineIsolateRuntime(Base) {
  return class IsolateCodeRuntime extends Base {
    constructor(ctx) {
      super(ctx, 'codeRuntime')
    }
  }
}
