// The documentation as a whole: README.md stays a first visit (≤ 350 lines) whose "Documentation"
// section links every page of docs/ (docs/*.md, found by listing the directory, so a new page must
// be linked), each page opens with its `# Title` and a link back to the README, and every relative
// link of README.md and docs/*.md resolves: the file exists and, for `#anchor`, the heading exists
// in the target page (GitHub's slugs: lower case, punctuation dropped, spaces → `-`, `-1`, `-2` …
// for repeats). Links inside code blocks and code spans are not links.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const MAX_README_LINES = 350;

const read = (file) => readFileSync(join(root, file), 'utf8');
const pages = () =>
  readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);

/** The lines of `markdown` outside fenced code blocks, as [lineNumber, text]. */
function proseLines(markdown) {
  const out = [];
  let fence = null;
  markdown.split('\n').forEach((line, i) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker) fence = marker;
    else if (fence !== null && marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
    else if (fence === null) out.push([i + 1, line]);
  });
  return out;
}

/** GitHub's anchor for a heading's text. */
function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading: its text
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings, repeats numbered as GitHub numbers them. */
function anchors(markdown) {
  const seen = new Map();
  const out = new Set();
  for (const [, line] of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The link targets of a Markdown text, outside code: [{ line, target }]. */
function links(markdown) {
  const out = [];
  for (const [line, text] of proseLines(markdown)) {
    const prose = text.replace(/`[^`]*`/g, '``');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line, target: m[1] });
    const reference = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
    if (reference) out.push({ line, target: reference[1] });
  }
  return out;
}

/**
 * The relative links of `file` (a path from `base`) that do not resolve, as "file:line → target (why)".
 * `readText(path)` reads a file under `base`; `exists(path)` says whether a path exists.
 */
function brokenLinks(file, { readText, exists }) {
  const broken = [];
  for (const { line, target } of links(readText(file))) {
    if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // absolute: https:, mailto:
    const [rawPath, anchor] = target.split('#', 2);
    const path = rawPath === '' ? file : normalize(join(dirname(file), decodeURIComponent(rawPath)));
    const where = `${file}:${line} → ${target}`;
    if (path.startsWith('..')) {
      broken.push(`${where} (outside the repository)`);
      continue;
    }
    if (!exists(path)) {
      broken.push(`${where} (no file ${path})`);
      continue;
    }
    if (anchor !== undefined && path.endsWith('.md') && !anchors(readText(path)).has(anchor)) {
      broken.push(`${where} (no heading with the anchor #${anchor} in ${path})`);
    }
  }
  return broken;
}

const inRepository = {
  readText: read,
  exists: (path) => existsSync(join(root, path)),
};

test(`README.md has at most ${MAX_README_LINES} lines`, () => {
  const lines = read('README.md').split('\n').length - (read('README.md').endsWith('\n') ? 1 : 0);
  assert.ok(lines <= MAX_README_LINES, `README.md has ${lines} lines: move reference material into docs/`);
});

test('README.md links every page of docs/ from its "Documentation" section', () => {
  const readme = read('README.md');
  const start = readme.indexOf('\n## Documentation\n');
  assert.ok(start >= 0, 'README.md has a "## Documentation" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const linked = new Set(links(section).map(({ target }) => normalize(target.split('#')[0])));
  const found = pages();
  assert.ok(found.length >= 5, `docs/ has its pages: ${found}`);
  const missing = found.filter((page) => !linked.has(page));
  assert.deepEqual(missing, [], 'pages of docs/ that README.md\'s Documentation section does not link');
});

test('every page of docs/ opens with its # Title and a link back to the README', () => {
  for (const page of pages()) {
    const [title, blank, back] = read(page).split('\n');
    assert.match(title, /^# \S/, `${page} starts with a # Title`);
    assert.equal(blank, '', `${page}: a blank line after the title`);
    assert.match(back, /\]\(\.\.\/README\.md\)/, `${page}: line 3 links back to ../README.md`);
  }
});

test('every relative link and #anchor of README.md and docs/*.md resolves', () => {
  const files = ['README.md', ...pages()];
  const broken = files.flatMap((file) => brokenLinks(file, inRepository));
  assert.deepEqual(broken, [], 'links that do not resolve');
  const checked = files.flatMap((file) => links(read(file)).filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target)));
  assert.ok(checked.length >= 30, `relative links checked: ${checked.length}`);
});

test('the link checker can fail: a missing file, a missing anchor, a link out of the repository', () => {
  const files = {
    'README.md': [
      '# Top',
      '## The budget math',
      '## A fleet, that scales — in `Redis`',
      '## Repeat',
      '## Repeat',
      '[ok](#the-budget-math) [ok](#a-fleet-that-scales--in-redis) [ok](#repeat-1) [ok](docs/a.md#options)',
      '[gone](docs/missing.md) [bad anchor](docs/a.md#nope) [bad local](#repeat-2) [up](../x.md)',
      '`[in code](docs/missing.md)` [web](https://example.com/x#y)',
      '```md',
      '[in a block](docs/missing.md)',
      '```',
    ].join('\n'),
    'docs/a.md': '# A\n\n[back](../README.md#top)\n\n## Options\n',
  };
  const broken = brokenLinks('README.md', {
    readText: (path) => files[path],
    exists: (path) => path in files,
  });
  assert.deepEqual(broken, [
    'README.md:7 → docs/missing.md (no file docs/missing.md)',
    'README.md:7 → docs/a.md#nope (no heading with the anchor #nope in docs/a.md)',
    'README.md:7 → #repeat-2 (no heading with the anchor #repeat-2 in README.md)',
    'README.md:7 → ../x.md (outside the repository)',
  ]);
  assert.deepEqual(brokenLinks('docs/a.md', { readText: (path) => files[path], exists: (path) => path in files }), []);
});
