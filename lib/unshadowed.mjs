// cordis hands a service out through a proxy that, by default, wraps each method it hands out
// in two new proxies and a context of the caller's ("shadowing": `this.ctx` inside the method is
// then the caller's context). These services never read `this.ctx` in a method, and the wrapping
// cost every run ~4 µs warm and ~30 µs on a cold CPU (runs 20 ms apart), measured through the
// seam (docs/performance.md). cordis's tracker option `noShadow` hands methods out as they are;
// `this.ctx` still reads as the caller's context through the proxy.

const TRACKER = Symbol.for('cordis.tracker')

/** Has cordis hand `service`'s methods out unwrapped (its tracker's `noShadow`). */
export function unshadowed(service) {
  const tracker = service[TRACKER]
  if (tracker !== null && typeof tracker === 'object') tracker.noShadow = true
}
