// Property tests over the whole option space (fast-check), each run in a child process
// (fixtures/option-fuzz.mjs) so that a native abort fails its test instead of killing the runner:
// every call either throws an Error coded ERR_SPEND_SENTINEL_* or works, and never aborts or
// hangs; input that breaks a documented rule must throw. Fixed seed, bounded runs (~10 s total).
// On failure the child's report (fast-check's shrunk counterexample, or for an abort the input
// being tried when it died) is printed; credentials appear only as their length.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { closedPort, runNode } from './helpers/wait.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/option-fuzz.mjs', import.meta.url));
const PROPERTIES = ['sentinel', 'computeBudget', 'whenReady', 'onTransition', 'circuitBreaker'];

/**
 * The child's stderr without its per-input trace; after a crash, plus the last input (the one
 * that was being tried when the process died: an abort cannot be shrunk).
 */
function report(stderr, crashed) {
  const lines = stderr.split('\n');
  const inputs = lines.filter((l) => l.startsWith('input: '));
  const rest = lines.filter((l) => !l.startsWith('input: ') && l !== '');
  const last = crashed && inputs.length > 0 ? [`last input tried (of ${inputs.length}): ${inputs.at(-1).slice(7, 2007)}`] : [];
  return [...rest, ...last].join('\n');
}

describe('option fuzz: coded error or works, never an abort', () => {
  let port;
  before(async () => {
    port = await closedPort(); // HTTP authorities point here: connections are refused, no network
  });

  for (const property of PROPERTIES) {
    test(property, async () => {
      const child = await runNode(['--no-warnings', FIXTURE, property, String(port)], { timeoutMs: 30_000 });
      const detail = `\n--- child (exit ${child.code}, signal ${child.signal}, ${Math.round(child.elapsedMs)} ms) ---\n${report(child.stderr, child.code !== 0 && child.code !== 1)}`;
      assert.equal(child.timedOut, false, `the ${property} property hung (killed after 30 s)${detail}`);
      assert.equal(child.signal, null, `the ${property} child died of ${child.signal}${detail}`);
      assert.notEqual(child.code, 134, `the ${property} child aborted${detail}`);
      assert.equal(child.code, 0, `the ${property} property failed${detail}`);
      assert.match(child.stdout, new RegExp(`^${property}: \\d+ runs passed`), 'the child ran its property');
    });
  }
});
