// The relative links of the documentation's Markdown, where they point, and the anchors of its
// headings as GitHub (and npm's package page) make them: for the checks that the README's and
// docs/' links work from the package itself (package.spec.mjs, pack-install.spec.mjs).

/** The relative links and images of a Markdown text (outside code), with their line numbers. */
export function relativeLinks(markdown) {
  const links = [];
  let fenced = false;
  for (const [i, text] of markdown.split('\n').entries()) {
    if (/^```/.test(text)) fenced = !fenced;
    if (fenced || /^```/.test(text)) continue;
    for (const [, target] of text.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ line: i + 1, target });
    }
  }
  return links;
}

/** `path` relative to the page `from`, both from the package root. */
export const posixJoin = (from, path) => new URL(path, `file:///${from}`).pathname.slice(1);

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces → '-', repeats numbered. */
export function headingAnchors(markdown) {
  const anchors = new Set();
  const seen = new Map();
  let fenced = false;
  for (const text of markdown.split('\n')) {
    if (/^```/.test(text)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = heading[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}
