// The streams benchmark's safety figure (bench/streams.mjs, the silent-authority ceiling), in its
// short form: 48 streams that record each chunk once produced and extend one chunk ahead run on a
// healthy authority, then the authority goes silent (no call made after that moment T ever
// answers) and the streams go on until the ledger stops them. The units produced after T must not
// exceed the node budget plus the overage recorded after T (docs/api.md, Reservations: the units
// spent after any moment never exceed the node budget plus the overage recorded after it).
// Real time, a few seconds. The benchmark's throughput figures depend on the machine's timing and
// are never asserted; nothing here bounds a duration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentCeiling, withinCeiling } from '../bench/streams.mjs';

test('streams keep the ceiling once the authority falls silent: produced after T ≤ node budget + overage after T', { timeout: 120_000 }, async () => {
  const figures = await silentCeiling({ streams: 48, rampMs: 1000, healthyMs: 1000, seed: 1 });
  const detail = JSON.stringify(figures);
  // Premises: streams were running at T, and they all ended before the benchmark gave up waiting.
  assert.ok(figures.openAtT > 0 && figures.producedAfter > 0, `no stream ran across the silence: ${detail}`);
  assert.equal(figures.stopped, true, `streams still open when the benchmark gave up: ${detail}`);
  assert.ok(
    figures.producedAfter <= figures.nodeBudget + figures.overageAfter,
    `produced after T ${figures.producedAfter} > node budget ${figures.nodeBudget} + overage after T ${figures.overageAfter}: ${detail}`,
  );
  assert.equal(figures.pass, true, 'the benchmark prints the same verdict');
  assert.equal(withinCeiling(figures), true);
});
