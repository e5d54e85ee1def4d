// The seam's reserved-set constants (docs/seam.md#reserved-names), defined once in Rust
// (src/seam/reserved.rs).
import native from './native.mjs'

const sets = native.reservedSets()

/** @type {ReadonlySet<string>} */
export const PORTABLE_RESERVED_WORDS = Object.freeze(new Set(sets.portableReservedWords))
/** @type {ReadonlySet<string>} */
export const RESERVED_BINDING_GLOBALS = Object.freeze(new Set(sets.reservedBindingGlobals))
/** @type {ReadonlySet<string>} */
export const RESERVED_ERROR_MEMBERS = Object.freeze(new Set(sets.reservedErrorMembers))
/** `/^__.+__$/` */
export const DUNDER_MEMBER = new RegExp(sets.dunderMember)
