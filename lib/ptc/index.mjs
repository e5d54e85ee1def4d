// Subpath `code-runtime-native/ptc`: both backends as cordis services registering
// `ctx.ptcRuntime` (the host's seam since 0.1.6), standalone on this package's own base class,
// and `definePtcRuntimes` for hosts that bring their abstract `PtcRuntime`.
import { Service } from 'cordis'
import { definePtcRuntimes } from './services.mjs'

/**
 * The base of the standalone classes, for hosts without `@deepseek-ai/dsh-ptc-runtime`: a cordis
 * Service registering `ptcRuntime`, as the host's abstract `PtcRuntime` does.
 */
export class PtcService extends Service {
  constructor(ctx) {
    super(ctx, 'ptcRuntime')
  }
}

export const { IsolatePtcRuntime, PythonPtcRuntime } = definePtcRuntimes(PtcService)
export { definePtcRuntimes }
export { filePlan } from './file-plan.mjs'
export default IsolatePtcRuntime
