// The scenarios of a subverted sandbox process (`isolate-forge`, src/process_tier/child/forge.rs)
// that break the channel protocol, each with the rule the host names when it ends the run. Driven
// through the supervisor's reader (isolate-process-forged.test.mjs) and through Node's main
// thread (isolate-process-forged-main.test.mjs).
export const PROTOCOL_BREACHES = [
  ['garbage', 'a frame did not parse'],
  ['undeclared-call', 'a call named no declared binding'],
  ['oversized-frame', 'a frame exceeded its size cap'],
  ['huge-args', "a call's arguments exceeded the byte cap"],
  ['boot-ack', 'it announced a new isolate during a run'],
  ['lossy-done', 'its completion was not lossless JSON'],
]
