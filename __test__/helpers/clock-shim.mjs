// The wall-clock shim for redis-server (fixtures/clock-shim.c, an LD_PRELOAD library): compiled
// once per process with `cc`, and one offset file per server that the test rewrites to step that
// server's clock. Used by startRedis({ clockShim: true }) in redis.mjs.
import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The environment variable the shim reads the offset file's path from. */
export const CLOCK_FILE_ENV = 'SPEND_SENTINEL_CLOCK_FILE';
const SOURCE = fileURLToPath(new URL('../fixtures/clock-shim.c', import.meta.url));
const NO_CC = 'cc (a C compiler) was not found on PATH: install the Debian packages `gcc libc6-dev`';

// One temp dir per process for the shim and the offset files, removed when the process exits
// (offset files must outlive a stop(): restart() reuses them).
let scratch = null;
function scratchDir() {
  if (!scratch) {
    scratch = mkdtempSync(join(tmpdir(), 'spend-sentinel-clock-'));
    process.once('exit', () => rmSync(scratch, { recursive: true, force: true }));
  }
  return scratch;
}

const built = new Map(); // dir → Promise<path of clock-shim.so>

/**
 * Compiles the shim into `<dir>/clock-shim.so` (default: a per-process temp dir) and resolves with
 * that path; a second call for the same dir reuses the first build.
 */
export function buildClockShim(dir = scratchDir()) {
  if (!built.has(dir)) {
    const out = join(dir, 'clock-shim.so');
    const partial = `${out}.${process.pid}.tmp`; // renamed when complete: a reader never sees half a library
    const build = new Promise((resolve, reject) => {
      execFile('cc', ['-shared', '-fPIC', '-O2', '-Wall', '-o', partial, SOURCE, '-ldl'], { timeout: 30000 }, (err, _stdout, stderr) => {
        if (err?.code === 'ENOENT') reject(new Error(NO_CC));
        else if (err) reject(new Error(`cc failed to build the clock shim: ${stderr.trim() || err.message}`));
        else resolve();
      });
    }).then(async () => {
      await rename(partial, out);
      return out;
    });
    build.catch(() => built.delete(dir)); // a failed build may be retried
    built.set(dir, build);
  }
  return built.get(dir);
}

/**
 * A fresh offset file (8 zero bytes) for one server: `path` goes into CLOCK_FILE_ENV,
 * `step(seconds)` adds to the cumulative offset and rewrites the file in place.
 */
export function clockFile() {
  const dir = mkdtempSync(join(scratchDir(), 'server-'));
  const path = join(dir, 'offset');
  let offsetNs = 0n;
  const encode = () => {
    const buf = Buffer.alloc(8);
    if (endianness() === 'LE') buf.writeBigInt64LE(offsetNs);
    else buf.writeBigInt64BE(offsetNs);
    return buf;
  };
  writeFileSync(path, encode()); // before any server maps it
  // Later writes go in place ('r+'): 'w' would truncate first, and the shim reading its mapped
  // page past the end of the file gets SIGBUS.
  const rewrite = () => {
    const fd = openSync(path, 'r+');
    try {
      writeSync(fd, encode(), 0, 8, 0);
    } finally {
      closeSync(fd);
    }
  };
  return {
    path,
    env: { [CLOCK_FILE_ENV]: path },
    get offsetSeconds() {
      return Number(offsetNs) / 1e9;
    },
    /** Positive: forward. Effective at once for the running server (its next clock read). */
    step(seconds) {
      if (!Number.isFinite(seconds)) throw new TypeError(`stepClock(seconds) needs a finite number, got ${seconds}`);
      offsetNs += BigInt(Math.round(seconds * 1e9));
      rewrite();
    },
  };
}
