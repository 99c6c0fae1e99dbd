// The ```js / ```ts blocks of README.md and of every page in docs/, their markers, and compiling one
// under --strict with TypeScript's API. The marker convention is described in
// __test__/readme-snippets.spec.mjs.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';

const ts = createRequire(import.meta.url)('typescript');
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The Markdown files whose examples are checked, from the repository root: README.md, then docs/*.md (sorted). */
export function documentationFiles() {
  const pages = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages];
}

/** Every ```js / ```ts block of the documentation files, each with `file` (e.g. 'docs/api.md'). */
export function documentationSnippets(files = documentationFiles()) {
  return files.flatMap((file) => readmeSnippets(readFileSync(join(root, file), 'utf8'), file));
}

/** The ```js / ```ts blocks of `markdown` (the text of `file`), each with its marker ('check', 'run', 'fragment' or null): { file, line, lang, code, marker, declarations, reason, name }. */
export function readmeSnippets(markdown, file = 'README.md') {
  const lines = markdown.split('\n');
  const snippets = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)/.exec(lines[i]);
    if (!fence) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    i = end;
    const lang = fence[1];
    if (lang !== 'js' && lang !== 'ts') continue;
    const code = lines.slice(start + 1, end).join('\n');
    // The marker: the HTML comment ending on the line before the fence.
    let marker = null;
    if (start > 0 && /-->\s*$/.test(lines[start - 1])) {
      let open = start - 1;
      while (open >= 0 && !lines[open].includes('<!--')) open--;
      if (open >= 0) marker = lines.slice(open, start).join('\n');
    }
    const snippet = { file, line: start + 1, lang, code, marker: null, declarations: '', reason: null, name: null };
    const check = marker && /^<!--\s*check-snippet\b([\s\S]*?)-->\s*$/.exec(marker);
    // A whole program, run as pasted by doc-programs.spec.mjs under the file name it gives.
    const run = marker && /^<!--\s*runs-as-pasted:\s*(\S+)[^\n]*?-->\s*$/.exec(marker);
    const fragment = marker && /^<!--\s*fragment:\s*([\s\S]*?)\s*-->\s*$/.exec(marker);
    if (check) {
      snippet.marker = 'check';
      snippet.declarations = check[1].trim();
    } else if (run) {
      snippet.marker = 'run';
      snippet.name = run[1];
    } else if (fragment && fragment[1] !== '') {
      snippet.marker = 'fragment';
      snippet.reason = fragment[1];
    }
    snippets.push(snippet);
  }
  return snippets;
}

const COMPILER_OPTIONS = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  moduleDetection: ts.ModuleDetectionKind.Force,
  types: ['node'],
  allowJs: true,
  checkJs: true,
  skipLibCheck: true,
};

/** Compiles one snippet (virtual files inside __test__/, so `spend-sentinel` resolves to this package); returns its diagnostics as text. */
export function compileSnippet({ file: doc = 'README.md', line, lang, code, declarations }, options = COMPILER_OPTIONS) {
  const ext = lang === 'ts' ? '.mts' : /^\s*import\s/m.test(code) ? '.mjs' : '.cjs';
  const base = `snippet-${doc.replace(/[^A-Za-z0-9]+/g, '-')}-line-${line}`;
  const file = join(root, '__test__', `${base}${ext}`);
  const stubs = join(root, '__test__', `${base}.declarations.d.ts`);
  const virtual = new Map([
    [file, code],
    [stubs, `// Declarations from ${doc}, line ${line - 1}.\n${declarations}\n`],
  ]);
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => (virtual.has(f) ? virtual.get(f) : readFile.call(host, f));
  host.getSourceFile = (f, languageVersion, ...rest) =>
    virtual.has(f) ? ts.createSourceFile(f, virtual.get(f), languageVersion, true) : getSourceFile.call(host, f, languageVersion, ...rest);
  const program = ts.createProgram({ rootNames: [stubs, file], options, host });
  const diagnostics = ts.getPreEmitDiagnostics(program).filter((d) => d.file === undefined || virtual.has(d.file.fileName));
  return diagnostics.map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (!d.file) return `TS${d.code}: ${text}`;
    const { line: l } = d.file.getLineAndCharacterOfPosition(d.start);
    const where = d.file.fileName === file ? `${doc}:${line + 1 + l}` : `declarations before ${doc}:${line}`;
    return `${where}: TS${d.code}: ${text}`;
  });
}

