// Builds the runtime service classes on a base class: cordis `Service` for this package's own
// exports, or the agent host's abstract `CodeRuntime` (itself a cordis Service) via the factory.
import { defineIsolateRuntime } from './isolate-runtime.mjs'
import { definePythonRuntime } from './python-runtime.mjs'

/** The name both backends register under (docs/seam.md#registration). */
export const SERVICE_NAME = 'codeRuntime'

/**
 * @param {abstract new (ctx: any, name: string) => object} Base a cordis Service (or subclass);
 *   the classes call `super(ctx, 'codeRuntime')`.
 */
export function defineCodeRuntimes(Base) {
  return {
    IsolateCodeRuntime: defineIsolateRuntime(Base),
    PythonCodeRuntime: definePythonRuntime(Base),
  }
}
