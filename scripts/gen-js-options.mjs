// The framework glue's option fields in the typings and its option tables in docs/frameworks.md,
// generated from the option catalog (js/options-catalog.js), as the addon's are from
// src/options/catalog.rs. `node scripts/gen-js-options.mjs` rewrites them, each only between its
// markers (`// js-options:begin NAME` … `// js-options:end NAME` in a .d.ts,
// `<!-- js-options:begin NAME -->` … `<!-- js-options:end NAME -->` on a page);
// __test__/js-options.spec.mjs fails when they disagree with the catalog.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { PROBES, FASTIFY_PLUGIN, ADMISSION, SHUTDOWN } = require('../js/options-catalog.js');

const root = fileURLToPath(new URL('../', import.meta.url));
export const COMMAND = 'node scripts/gen-js-options.mjs';

/** Which interface bodies hold which section's fields: each .d.ts and its sections. */
const TYPINGS = [
  { file: 'js/common.d.ts', sections: [PROBES, ADMISSION, SHUTDOWN] },
  { file: 'js/fastify.d.ts', sections: [FASTIFY_PLUGIN] },
];

/** The tables of docs/frameworks.md: a table lists its sections' options, a section's with its note. */
const PAGE = 'docs/frameworks.md';
const DOC_TABLES = [
  { name: 'probes', sections: [{ section: PROBES }, { section: FASTIFY_PLUGIN, note: '(Fastify only)' }] },
  { name: 'admission', sections: [{ section: ADMISSION }] },
  { name: 'shutdown', sections: [{ section: SHUTDOWN }] },
];

/** Width of the typings' JSDoc lines, as in the generated js/option-types.d.ts. */
const WIDTH = 100;

/** The default in words: `shown`, else the value's own spelling ('none' for no value). */
function defaultText(option) {
  if (option.shown !== undefined) return option.shown;
  const value = option.default;
  if (value === undefined || value === null) return 'none';
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map((item) => `\`${item}\``).join(', ');
  if (typeof value === 'object' && Object.keys(value).length === 0) return '`{}`';
  if (typeof value === 'string' || typeof value === 'boolean') return `\`${value}\``;
  throw new Error(`${option.name}: give its default in words (\`shown\`)`);
}

/** The rule in words: the kind's, and the one checked elsewhere. */
function ruleText(option) {
  return option.also ? `${option.kind.rule}; ${option.also}` : option.kind.rule;
}

const sentence = (text) => (text.endsWith('.') ? text : `${text}.`);
const capitalized = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** `text` as a JSDoc comment at `indent`: one line if it fits, else wrapped at WIDTH. */
function jsdoc(indent, text) {
  const one = `${indent}/** ${text} */`;
  if (one.length <= WIDTH) return `${one}\n`;
  const lines = [];
  let line = `${indent} *`;
  for (const word of text.split(' ')) {
    if (line.length + 1 + word.length > WIDTH && line !== `${indent} *`) {
      lines.push(line);
      line = `${indent} *`;
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return `${indent}/**\n${lines.join('\n')}\n${indent} */\n`;
}

/** A section's fields, each with its doc comment: what it is, its rule, its default. */
function typingsBlock(section, indent) {
  return section.options
    .map((option) => {
      const doc = [sentence(option.doc), sentence(capitalized(ruleText(option))), `Default: ${sentence(defaultText(option))}`].join(' ');
      return `${jsdoc(indent, doc)}${indent}${option.name}?: ${option.ts};\n`;
    })
    .join('');
}

/** A table's lines, header included (what goes between its markers). */
function docTable(table) {
  const rows = table.sections.flatMap(({ section, note }) =>
    section.options.map((option) => {
      const name = note ? `\`${option.name}\` ${note}` : `\`${option.name}\``;
      const cells = [name, option.doc, defaultText(option), ruleText(option)].map((cell) => cell.replaceAll('|', '\\|'));
      return `| ${cells.join(' | ')} |\n`;
    }),
  );
  return ['| option | what it is | default | rule |\n', '|---|---|---|---|\n', ...rows].join('');
}

/**
 * `text` with the lines between the marker lines `begin` and `end` replaced by `body`
 * (`body(indent)`, given the begin marker's indentation).
 */
function splice(text, begin, end, body, where) {
  const lines = text.split('\n');
  const first = lines.findIndex((line) => line.trim() === begin);
  const last = lines.findIndex((line, i) => i > first && line.trim() === end);
  if (first === -1 || last === -1) throw new Error(`${where}: the markers \`${begin}\` and \`${end}\` must each be on a line of their own, in this order`);
  const indent = /^\s*/.exec(lines[first])[0];
  const block = body(indent).replace(/\n$/, '');
  return [...lines.slice(0, first + 1), ...(block === '' ? [] : block.split('\n')), ...lines.slice(last)].join('\n');
}

/** Every generated file: `{ file, actual, expected }`. */
export function generatedFiles() {
  const files = TYPINGS.map(({ file, sections }) => {
    const actual = readFileSync(join(root, file), 'utf8');
    let expected = actual;
    for (const section of sections) {
      expected = splice(expected, `// js-options:begin ${section.name}`, `// js-options:end ${section.name}`, (indent) => typingsBlock(section, indent), file);
    }
    return { file, actual, expected };
  });
  const actual = readFileSync(join(root, PAGE), 'utf8');
  let expected = actual;
  for (const table of DOC_TABLES) {
    expected = splice(expected, `<!-- js-options:begin ${table.name} -->`, `<!-- js-options:end ${table.name} -->`, () => docTable(table), PAGE);
  }
  files.push({ file: PAGE, actual, expected });
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const { file, actual, expected } of generatedFiles()) {
    if (actual === expected) continue;
    writeFileSync(join(root, file), expected);
    console.log(`rewrote ${file}`);
  }
}
