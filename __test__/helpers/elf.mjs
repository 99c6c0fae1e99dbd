// What a built binary asks of the system: the glibc symbol versions an ELF file needs, read with
// binutils' readelf (it comes with the C compiler the Redis tests already need).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The GLIBC_x.y versions in the file's version-needs section (.gnu.version_r), sorted oldest
 * first: the loader refuses the file on a glibc older than the last one.
 */
export function glibcVersionsNeeded(file) {
  const text = execFileSync('readelf', ['--version-info', '--wide', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const needs = text.slice(text.indexOf("Version needs section '.gnu.version_r'"));
  const versions = [...needs.matchAll(/Name: GLIBC_(\d+(?:\.\d+)+)/g)].map((m) => m[1]);
  return [...new Set(versions)].sort(compareVersions);
}

export function compareVersions(a, b) {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < Math.max(x.length, y.length); i += 1) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export const versionAtMost = (version, limit) => compareVersions(version, limit) <= 0;

export const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
