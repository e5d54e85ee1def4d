  // 01-intrinsics.js: a fragment of the body of the one function the files of parts.txt join into,
  // in its order (README.md): captured intrinsics (primordials) and the Node major followed.

  // =========================================================================
  // 1. Captured intrinsics. Nothing below this section looks anything up on
  //    a global or on a built-in prototype at call time.
  // =========================================================================
  const FunctionPrototype = Function.prototype;
  const uncurryThis = FunctionPrototype.bind.bind(FunctionPrototype.call);
  const FunctionPrototypeBind = uncurryThis(FunctionPrototype.bind);
  const OriginalFunctionToString = FunctionPrototype.toString;
  const FunctionPrototypeToString = uncurryThis(OriginalFunctionToString);
  const ReflectApply = Reflect.apply;
  const ReflectOwnKeys = Reflect.ownKeys;

  const ObjectPrototype = Object.prototype;
  const ObjectKeys = Object.keys;
  const ObjectValues = Object.values;
  const ObjectGetOwnPropertyNames = Object.getOwnPropertyNames;
  const ObjectGetOwnPropertySymbols = Object.getOwnPropertySymbols;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectSetPrototypeOf = Object.setPrototypeOf;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectCreate = Object.create;
  const ObjectFreeze = Object.freeze;
  const ObjectIs = Object.is;
  const ObjectPrototypeHasOwnProperty = uncurryThis(ObjectPrototype.hasOwnProperty);
  const ObjectPrototypePropertyIsEnumerable = uncurryThis(ObjectPrototype.propertyIsEnumerable);

  const ArrayCtor = Array;
  const ArrayPrototype = Array.prototype;
  const ArrayIsArray = Array.isArray;
  const ArrayPrototypeJoin = uncurryThis(ArrayPrototype.join);
  const ArrayPrototypeSort = uncurryThis(ArrayPrototype.sort);

  const StringCtor = String;
  const StringPrototype = String.prototype;
  const StringPrototypeSlice = uncurryThis(StringPrototype.slice);
  const StringPrototypeCharCodeAt = uncurryThis(StringPrototype.charCodeAt);
  const StringPrototypeCodePointAt = uncurryThis(StringPrototype.codePointAt);
  const StringPrototypeIndexOf = uncurryThis(StringPrototype.indexOf);
  const StringPrototypeLastIndexOf = uncurryThis(StringPrototype.lastIndexOf);
  const StringPrototypeIncludes = uncurryThis(StringPrototype.includes);
  const StringPrototypeStartsWith = uncurryThis(StringPrototype.startsWith);
  const StringPrototypeEndsWith = uncurryThis(StringPrototype.endsWith);
  const StringPrototypeRepeat = uncurryThis(StringPrototype.repeat);
  const StringPrototypePadStart = uncurryThis(StringPrototype.padStart);
  const StringPrototypePadEnd = uncurryThis(StringPrototype.padEnd);
  const StringPrototypeNormalize = uncurryThis(StringPrototype.normalize);
  const StringPrototypeToLowerCase = uncurryThis(StringPrototype.toLowerCase);
  const StringPrototypeValueOf = uncurryThis(StringPrototype.valueOf);

  const NumberCtor = Number;
  const NumberIsNaN = Number.isNaN;
  const NumberIsFinite = Number.isFinite;
  const NumberParseInt = Number.parseInt;
  const NumberParseFloat = Number.parseFloat;
  const NumberPrototypeToString = uncurryThis(Number.prototype.toString);
  const NumberPrototypeToFixed = uncurryThis(Number.prototype.toFixed);
  const NumberPrototypeValueOf = uncurryThis(Number.prototype.valueOf);
  const BooleanPrototypeValueOf = uncurryThis(Boolean.prototype.valueOf);
  const BigIntPrototypeValueOf = uncurryThis(BigInt.prototype.valueOf);
  const SymbolPrototypeValueOf = uncurryThis(Symbol.prototype.valueOf);
  const SymbolPrototypeToString = uncurryThis(Symbol.prototype.toString);
  const SymbolToStringTag = Symbol.toStringTag;
  const SymbolToPrimitive = Symbol.toPrimitive;

  const NumberPrototype = Number.prototype;
  const BooleanPrototype = Boolean.prototype;
  const BigIntPrototype = BigInt.prototype;
  const SymbolPrototype = Symbol.prototype;
  const DatePrototype = Date.prototype;
  const BooleanPrototypeToString = uncurryThis(BooleanPrototype.toString);
  const BigIntPrototypeToString = uncurryThis(BigIntPrototype.toString);
  const MathMin = Math.min;
  const MathMax = Math.max;
  const MathFloor = Math.floor;
  const MathRound = Math.round;
  const MathSqrt = Math.sqrt;
  const MathTrunc = Math.trunc;
  const MathCeil = Math.ceil;

  const JSONStringify = JSON.stringify;

  const DatePrototypeGetTime = uncurryThis(Date.prototype.getTime);
  const DatePrototypeToISOString = uncurryThis(Date.prototype.toISOString);
  const DatePrototypeToString = uncurryThis(Date.prototype.toString);

  const RegExpPrototype = RegExp.prototype;
  const SetCtor = Set;
  const SetPrototypeHas = uncurryThis(Set.prototype.has);
  const SetPrototypeAdd = uncurryThis(Set.prototype.add);
  const RegExpPrototypeExec = uncurryThis(RegExpPrototype.exec);
  function getterOf(proto, key) {
    const d = ObjectGetOwnPropertyDescriptor(proto, key);
    return d === undefined ? undefined : d.get;
  }
  const RegExpPrototypeGetSource = uncurryThis(getterOf(RegExpPrototype, 'source'));
  // [flag character, uncurried getter] in the order of RegExp.prototype.flags.
  const regExpFlagGetters = [];
  {
    const names = ['hasIndices', 'd', 'global', 'g', 'ignoreCase', 'i', 'multiline', 'm',
      'dotAll', 's', 'unicode', 'u', 'unicodeSets', 'v', 'sticky', 'y'];
    for (let i = 0; i < names.length; i += 2) {
      const g = getterOf(RegExpPrototype, names[i]);
      if (g !== undefined) {
        regExpFlagGetters[regExpFlagGetters.length] = names[i + 1];
        regExpFlagGetters[regExpFlagGetters.length] = uncurryThis(g);
      }
    }
  }

  const MapCtor = Map;
  const MapPrototypeGetSize = uncurryThis(getterOf(Map.prototype, 'size'));
  const MapPrototypeEntries = uncurryThis(Map.prototype.entries);
  const MapPrototypeGet = uncurryThis(Map.prototype.get);
  const MapPrototypeSet = uncurryThis(Map.prototype.set);
  const MapPrototypeHas = uncurryThis(Map.prototype.has);
  const MapPrototypeDelete = uncurryThis(Map.prototype.delete);
  const MapIteratorPrototypeNext = uncurryThis(ObjectGetPrototypeOf(new Map().entries()).next);
  const SetPrototypeGetSize = uncurryThis(getterOf(Set.prototype, 'size'));
  const SetPrototypeValues = uncurryThis(Set.prototype.values);
  const SetIteratorPrototypeNext = uncurryThis(ObjectGetPrototypeOf(new Set().values()).next);

  const TypedArrayPrototype = ObjectGetPrototypeOf(Uint8Array.prototype);
  const TypedArrayPrototypeGetLength = uncurryThis(getterOf(TypedArrayPrototype, 'length'));
  const TypedArrayPrototypeGetByteLength = uncurryThis(getterOf(TypedArrayPrototype, 'byteLength'));
  const TypedArrayPrototypeGetByteOffset = uncurryThis(getterOf(TypedArrayPrototype, 'byteOffset'));
  const TypedArrayPrototypeGetBuffer = uncurryThis(getterOf(TypedArrayPrototype, 'buffer'));
  const TypedArrayToStringTagGetter = getterOf(TypedArrayPrototype, SymbolToStringTag);
  const TypedArrayPrototypeGetSymbolToStringTag = uncurryThis(TypedArrayToStringTagGetter);
  const Uint8ArrayCtor = Uint8Array;
  const ArrayBufferPrototypeGetByteLength = uncurryThis(getterOf(ArrayBuffer.prototype, 'byteLength'));
  const DataViewPrototypeGetByteLength = uncurryThis(getterOf(DataView.prototype, 'byteLength'));
  const DataViewPrototypeGetByteOffset = uncurryThis(getterOf(DataView.prototype, 'byteOffset'));
  const DataViewPrototypeGetBuffer = uncurryThis(getterOf(DataView.prototype, 'buffer'));

  const ErrorPrototype = Error.prototype;
  const ErrorCaptureStackTrace = Error.captureStackTrace;
  const TypeErrorCtor = TypeError;
  const RangeErrorPrototype = RangeError.prototype;

  // Since V8 ~12 `error.stack` is an own accessor whose getter/setter pair is
  // shared by all errors (V8 11, in Node 20, shows a data property). We
  // present that native accessor as the data property Node 20 shows.
  const NativeErrorStackGetter = getterOf(new Error(), 'stack');

  // Iterator.prototype[Symbol.toStringTag] is a native accessor in newer V8.
  const IteratorCtor = typeof Iterator === 'function' ? Iterator : undefined;
  const IteratorPrototype = IteratorCtor === undefined ? undefined : IteratorCtor.prototype;
  const IteratorToStringTagGetter = IteratorCtor === undefined ? undefined :
    getterOf(IteratorPrototype, SymbolToStringTag);

  const nTypeTag = natives.typeTag;
  const nProxyTarget = natives.proxyTarget;
  const nProxyHandler = natives.proxyHandler;
  const nPromiseState = natives.promiseState;
  const nPreviewEntries = natives.previewEntries;
  const nOwnNonIndexKeys = natives.ownNonIndexKeys;
  const nConstructorName = natives.constructorName;
  const nNow = natives.now;
  const nStackFrames = natives.stackFrames;
  const nSharedByteLength = natives.sharedByteLength;

  // Arrays we write into. Their prototype chain is null, so element stores
  // never reach a program-defined indexed setter. (List.prototype is never
  // reachable by the program; it is not frozen because V8 then takes a slow
  // path for every element store.)
  class List extends ArrayCtor { constructor() { super(); } }
  ObjectSetPrototypeOf(List.prototype, null);
  function newList() { return new List(); }
  function push(list, value) { list[list.length] = value; }

  const T_OBJECT = 0;
  const T_PROXY = 1;
  const T_ARRAY = 2;
  const T_FUNCTION = 3;
  const T_ASYNC_FUNCTION = 4;
  const T_GENERATOR_FUNCTION = 5;
  const T_ASYNC_GENERATOR_FUNCTION = 6;
  const T_ERROR = 7;
  const T_DATE = 8;
  const T_REGEXP = 9;
  const T_MAP = 10;
  const T_SET = 11;
  const T_WEAK_MAP = 12;
  const T_WEAK_SET = 13;
  const T_MAP_ITERATOR = 14;
  const T_SET_ITERATOR = 15;
  const T_PROMISE = 16;
  const T_ARRAY_BUFFER = 17;
  const T_SHARED_ARRAY_BUFFER = 18;
  const T_DATA_VIEW = 19;
  const T_TYPED_ARRAY = 20;
  const T_NUMBER_OBJECT = 21;
  const T_STRING_OBJECT = 22;
  const T_BOOLEAN_OBJECT = 23;
  const T_BIGINT_OBJECT = 24;
  const T_SYMBOL_OBJECT = 25;
  const T_ARGUMENTS = 26;
  const T_MODULE_NAMESPACE = 27;

  const kObjectType = 0;
  const kArrayType = 1;
  const kArrayExtrasType = 2;

  const kWeak = 0;
  const kIterator = 1;
  const kMapEntries = 2;

  const kMinLineLength = 16;

  // ---- Which Node's output we reproduce ----
  // util.inspect changed between the Node majors the addon runs under (see
  // src/isolate/js/console/README.md, "Node majors"). Every difference is decided at call
  // time from `nodeMajor`, so one compiled script (and one startup snapshot)
  // serves all of them: the runtime calls setNodeMajor(host major) once per
  // run, before the program runs. A major we do not know (older than 20,
  // newer than 26, odd, not a number) follows the newest LTS we support.
  const NEWEST_LTS_MAJOR = 24;
  let nodeMajor = NEWEST_LTS_MAJOR;
  function setNodeMajor(major) {
    nodeMajor = major === 20 || major === 22 || major === 24 || major === 26 ? major : NEWEST_LTS_MAJOR;
    return nodeMajor;
  }

