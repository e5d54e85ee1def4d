'use strict';
// The console script as the runtime embeds it: the files listed in parts.txt (this folder),
// joined in that order into one function expression `(function (natives) { … })`. The runtime
// joins the same list at compile time (src/isolate/console.rs, `console_script!`, which fails
// the build when its list and parts.txt differ); the tests and the benchmark load it from here.
const fs = require('node:fs');
const path = require('node:path');

/** The part files, in the order they join. */
const PARTS = fs.readFileSync(path.join(__dirname, 'parts.txt'), 'utf8').split('\n').filter((line) => line !== '');

/** The joined script: the parts' text, concatenated. */
function joinConsoleScript() {
  return PARTS.map((part) => fs.readFileSync(path.join(__dirname, part), 'utf8')).join('');
}

module.exports = { PARTS, joinConsoleScript };
