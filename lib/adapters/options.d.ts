// What every framework adapter of code-runtime-native takes: the runtime it runs programs on.
import type { IsolatePtcRuntimeConfig, PtcRuntime } from '../ptc/index.js'

/**
 * Either a `ctx.ptcRuntime` you already run (the adapter never disposes it), or the config of an
 * `IsolatePtcRuntime` the adapter starts itself and ends with its `dispose()`. Neither: an
 * IsolatePtcRuntime with the production defaults.
 */
export type AdapterRuntimeOptions =
  | { runtime: PtcRuntime; config?: never }
  | { runtime?: undefined; config?: IsolatePtcRuntimeConfig }

