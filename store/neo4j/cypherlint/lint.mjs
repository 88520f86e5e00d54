// Lints the Neo4j store's Cypher statements with Neo4j's own Cypher 5 parser
// and semantic analysis, so a broken statement fails CI without a server.
//
// Input: JSON lines {"name","file","line","cypher"} on stdin, as printed by
// extract/main.go. Errors are listed and make the exit status 1; warnings
// are only counted unless VERBOSE=1. Bad input exits 2.
import { readFileSync } from 'node:fs';
import {
  isNotParamError,
  lintCypherQuery,
  parseStatementsStrs,
  testData,
} from '@neo4j-cypher/language-support';

const verbose = process.env.VERBOSE === '1';

// Statements run on Neo4j 5.11 and later; Cypher 25 accepts syntax that 5
// does not, so it must not be the default a statement falls back to.
const version = 'CYPHER 5';

// The package's registry of built-in procedures and functions is recorded
// from a real server: with it, a misspelt or unknown procedure or function
// is an error. Labels, types and property keys stay unknown on purpose:
// given, they only add warnings for names a fresh database lacks.
const { procedures, functions } = testData.mockSchema;
const dbSchema = { procedures, functions, defaultLanguage: version };
for (const [what, registry] of [['procedures', procedures], ['functions', functions]]) {
  // Without a registry the library skips the check silently.
  const n = Object.keys(registry?.[version] ?? {}).length;
  if (n < 100) {
    console.error(`cypher-lint: the linter knows only ${n} ${what} for ${version}; did a version bump move its registry?`);
    process.exit(2);
  }
}

// Severities as in the Language Server Protocol.
const ERROR = 1;

function readStatements() {
  const statements = [];
  const lines = readFileSync(0, 'utf8').split('\n');
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    let rec;
    try {
      rec = JSON.parse(text);
    } catch (err) {
      throw new Error(`stdin line ${i + 1}: ${err.message}`, { cause: err });
    }
    for (const key of ['name', 'file', 'cypher']) {
      if (typeof rec[key] !== 'string' || rec[key] === '') {
        throw new Error(`stdin line ${i + 1}: no ${key}`);
      }
    }
    statements.push(rec);
  });
  return statements;
}

// where points at the statement's declaration and at the spot inside it,
// because Go source lines and Cypher lines only match for raw strings.
function where(stmt, diag) {
  const { line, character } = diag.range.start;
  return `${stmt.file}:${stmt.line}: ${stmt.name} (Cypher line ${line + 1}, column ${character + 1})`;
}

function excerpt(stmt, diag) {
  const { line, character } = diag.range.start;
  const text = stmt.cypher.split('\n')[line] ?? '';
  return `    ${text}\n    ${' '.repeat(character)}^`;
}

let statements;
try {
  statements = readStatements();
} catch (err) {
  console.error(`cypher-lint: ${err.message}`);
  process.exit(2);
}
if (statements.length === 0) {
  console.error('cypher-lint: no statements on stdin; did the extraction fail?');
  process.exit(2);
}

let errors = 0;
let warnings = 0;
for (const stmt of statements) {
  // The driver sends each constant as one query; a second statement after
  // a semicolon would only fail on the server.
  const parts = parseStatementsStrs(stmt.cypher).filter((s) => s.trim() !== '');
  if (parts.length !== 1) {
    errors++;
    console.log(`${stmt.file}:${stmt.line}: ${stmt.name}: holds ${parts.length} statements; the driver runs exactly one`);
  }
  // Parameters are supplied at run time, so "not defined" says nothing.
  const { diagnostics } = lintCypherQuery(stmt.cypher, dbSchema, { consoleCommandsEnabled: false });
  for (const diag of diagnostics.filter(isNotParamError)) {
    if (diag.severity === ERROR) {
      errors++;
      console.log(`${where(stmt, diag)}: error: ${diag.message}\n${excerpt(stmt, diag)}`);
    } else {
      warnings++;
      if (verbose) console.log(`${where(stmt, diag)}: warning: ${diag.message}`);
    }
  }
}

const hint = warnings > 0 && !verbose ? ' (VERBOSE=1 lists the warnings)' : '';
console.log(`cypher-lint: ${statements.length} statements, ${errors} errors, ${warnings} warnings${hint}`);
process.exit(errors > 0 ? 1 : 0);
