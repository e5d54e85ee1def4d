  // 15-api.js: a fragment of the body of the one function the files of parts.txt join into, in its
  // order (README.md): the API the function returns, and its end.

  return ObjectFreeze({
    __proto__: null,
    formatLog,
    formatWithOptions,
    inspect,
    createConsole,
    defineCustomInspect,
    setNodeMajor,
    // for tests
    getStringWidth,
    stripVTControlCharacters,
  });
})
