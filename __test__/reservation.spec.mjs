// Reservations (docs/api.md): `reserve` holds units before work whose size is known only after
// it, `extend` holds more, `record` reports work already produced (it leaves the hold and counts
// from that moment), `settle` records the rest of the whole usage (refunding what is still held,
// or counting the overage), `release` settles at 0; `charge` records usage spent without an
// admission. Through
// the package entry, on a sentinel whose every refresh the test holds and answers: the test knows
// when each refresh was sent (its inspect call) and when its answer landed (the next inspect
// call, which the refresh loop makes only after applying the answer), so every ledger figure
// below is exact.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { catchError, fastOptions, held, recordTransitions, scriptedAuthority, sentinelPool } from './helpers/wait.mjs';
import { crossCheck, readExposition, valueOf } from './helpers/exposition.mjs';
import { readOpenMetrics } from './helpers/openmetrics.mjs';

const require = createRequire(import.meta.url);
const { Sentinel, Reservation } = require('spend-sentinel');

/**
 * Node budget 200 (the examples' figure) and a 200 s window, refreshes 20–40 ms apart with a
 * minute to answer: a held refresh stays in flight, and the evidence young, whatever the load.
 */
const BUDGET_200 = { budget: { unverifiedUnits: 200, maxUnitsPerSecond: 1 }, refresh: { timeoutMs: 60_000 } };

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

/**
 * A sentinel and its refreshes: `inFlight` is the refresh sent last, held until
 * `answer(outcome)`, which resolves once that answer has landed, the next refresh being sent at
 * that moment (it is the new `inFlight`). Nothing has been answered yet: readiness is no_evidence.
 */
async function heldRefreshes(over = BUDGET_200) {
  const auth = scriptedAuthority(held);
  const sentinel = pool.make(fastOptions(auth, over));
  const transitions = recordTransitions(sentinel);
  let inFlight = await auth.call(0);
  return {
    sentinel,
    transitions,
    async answer(outcome) {
      const call = inFlight;
      call.release(outcome);
      inFlight = await auth.call(call.index + 1);
    },
  };
}

/** As `heldRefreshes`, after a first `valid` answer: ready, ledger 0, a refresh in flight. */
async function ready(over) {
  const refreshes = await heldRefreshes(over);
  await refreshes.answer('valid');
  assert.equal(refreshes.sentinel.status(), 'ready', 'premise');
  return refreshes;
}

const ledger = (sentinel) => ({ exposure: sentinel.exposureUnits, reserved: sentinel.reservedUnits });

/** `sentinel.metrics()`, read strictly and by the library (they must agree). */
function scrapeText(sentinel) {
  const text = sentinel.metrics();
  const families = readExposition(text);
  crossCheck(text, families);
  return families;
}

const reservationFamilies = (families) => ({
  reserved: valueOf(families, 'spend_sentinel_reserved_units'),
  refunded: valueOf(families, 'spend_sentinel_refunded_units_total'),
  overage: valueOf(families, 'spend_sentinel_overage_units_total'),
});

describe('reserve, extend, settle, release', () => {
  test('reserve holds the units in the ledger until settle; extend holds more; the read-outs follow', async () => {
    const { sentinel } = await ready();
    const r = sentinel.reserve(30);
    assert.ok(r instanceof Reservation);
    assert.deepEqual([r.heldUnits, r.settled], [30, false]);
    assert.deepEqual(ledger(sentinel), { exposure: 30, reserved: 30 });
    assert.equal(sentinel.admit(5), true, 'plain admissions share the ledger');
    assert.equal(r.extend(20), true);
    assert.equal(r.extend(), true, 'extend() holds 1');
    assert.deepEqual([r.heldUnits, sentinel.reservedUnits, sentinel.exposureUnits], [51, 51, 56]);
    const small = sentinel.reserve();
    assert.equal(small.heldUnits, 1, 'reserve() holds 1');
    assert.equal(sentinel.reserve(undefined).heldUnits, 1);
    assert.equal(sentinel.reserve(0.25).heldUnits, 0.25);
    assert.deepEqual(ledger(sentinel), { exposure: 58.25, reserved: 53.25 });

    r.settle(40);
    assert.deepEqual([r.heldUnits, r.settled], [0, true]);
    assert.deepEqual(ledger(sentinel), { exposure: 47.25, reserved: 2.25 }, 'the unused 11 left at once; the used 40 are recorded');
    small.release();
    assert.deepEqual([small.heldUnits, small.settled], [0, true]);
    assert.deepEqual(ledger(sentinel), { exposure: 46.25, reserved: 1.25 });
    assert.equal(Object.prototype.toString.call(r), '[object Reservation]');
  });

  test('reserve answers exactly as admit: null where admit refuses, and refusalReason says why; extend too', async () => {
    const refreshes = await heldRefreshes();
    const { sentinel } = refreshes;
    /**
     * For each units in turn: reserve (then released) and `open.extend` answer as refusalReason
     * said just before, and so does admit (asked last: it records).
     */
    const agree = (where, unitsList, open) => {
      let reason;
      for (const units of unitsList) {
        reason = sentinel.refusalReason(units);
        const before = ledger(sentinel);
        const r = sentinel.reserve(units);
        if (reason === null) {
          assert.ok(r instanceof Reservation, `${where}: reserve(${units}) admitted`);
          assert.equal(sentinel.exposureUnits, before.exposure + units, `${where}: reserve(${units}) holds its units`);
          r.release();
        } else {
          assert.equal(r, null, `${where}: reserve(${units}) refused (${reason})`);
        }
        assert.deepEqual(ledger(sentinel), before, `${where}: released or refused, the ledger is as it was`);
        if (open) {
          assert.equal(open.extend(units), reason === null, `${where}: extend(${units}) (${reason})`);
          assert.equal(sentinel.exposureUnits, before.exposure + (reason === null ? units : 0), `${where}: extend(${units}) holds only what it admitted`);
          reason = sentinel.refusalReason(units);
        }
        assert.equal(sentinel.admit(units), reason === null, `${where}: admit(${units}) (${reason})`);
      }
      return reason;
    };
    assert.equal(agree('before any evidence', [1, 0]), 'no_evidence');

    await refreshes.answer('valid');
    assert.equal(agree('ready', [201]), 'budget_exhausted', 'more than the node budget');
    agree('ready', [0, 150, 50]);
    assert.equal(sentinel.exposureUnits, 200, 'premise: the node budget is spent by admissions');
    assert.equal(agree('spent', [0]), null, 'ledger + 0 ≤ node budget: zero units fit a budget spent exactly');
    assert.equal(agree('spent', [0.5]), 'budget_exhausted');

    await refreshes.answer('valid'); // sent before the admissions: they stay
    await refreshes.answer('valid'); // sent after them
    assert.equal(sentinel.exposureUnits, 0, 'premise');
    const open = sentinel.reserve(10);
    const growing = sentinel.reserve(0);
    assert.equal(agree('ready, one reservation open', [190, 1], growing), 'budget_exhausted', 'the open reservations count');
    assert.deepEqual([open.heldUnits, growing.heldUnits], [10, 190]);
    growing.release();

    await refreshes.answer('invalid_credential');
    assert.equal(agree('denied', [1], open), 'invalid_credential');
    assert.equal(open.settled, false, 'a denial does not end a reservation');
    open.release();

    sentinel.drain();
    await refreshes.answer('valid');
    assert.equal(sentinel.readiness().reason, 'shutting_down', 'premise: draining');
    assert.equal(agree('draining', [5], sentinel.reserve(1)), null, 'draining does not stop admission');

    sentinel.close();
    assert.equal(agree('closed', [1, 0]), 'shutting_down');
  });

  test('settle twice, or extend after settling, throws ERR_SPEND_SENTINEL_SETTLED and changes nothing; release after settle is a no-op', async () => {
    const { sentinel } = await ready();
    const r = sentinel.reserve(10);
    r.settle(4);
    const after = ledger(sentinel);
    for (const [what, call] of [
      ['settle again', () => r.settle(4)],
      ['settle again at 0', () => r.settle(0)],
      ['settle again with bad units', () => r.settle(-1)],
      ['extend', () => r.extend(1)],
      ['extend()', () => r.extend()],
      ['record', () => r.record(1)],
      ['record(0)', () => r.record(0)],
      ['record with bad units', () => r.record(-1)],
    ]) {
      const err = catchError(call);
      assert.ok(err instanceof TypeError, `${what}: a TypeError (${err})`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_SETTLED', what);
      assert.match(err.message, /already settled/, what);
      assert.deepEqual(ledger(sentinel), after, `${what}: nothing changed`);
    }
    r.release();
    r.release();
    assert.deepEqual(ledger(sentinel), after, 'release after settle: nothing');
    assert.deepEqual([r.heldUnits, r.settled], [0, true]);
    const released = sentinel.reserve(3);
    released.release();
    assert.equal(catchError(() => released.settle(3)).code, 'ERR_SPEND_SENTINEL_SETTLED', 'release settles');
  });
});

describe('bad units throw ERR_SPEND_SENTINEL_UNITS and change nothing', () => {
  const NOT_UNITS = [
    ['-1', -1], ['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity], ["'5'", '5'],
    ['null', null], ['{}', {}], ['true', true], ['1n', 1n],
  ];
  const got = (units) => (typeof units === 'number' ? String(units) : units === null ? 'null' : typeof units);

  /** `call()` throws the units TypeError naming `argument`, and the ledger, the reservation and the counters stay. */
  function assertRefused(sentinel, r, what, call, argument, units) {
    const state = () => ({ ...ledger(sentinel), held: r.heldUnits, counters: reservationFamilies(scrapeText(sentinel)) });
    const before = state();
    const err = catchError(call);
    assert.ok(err instanceof TypeError, `${what}: a TypeError (${err})`);
    assert.equal(err.code, 'ERR_SPEND_SENTINEL_UNITS', what);
    assert.equal(err.message, `${argument}: must be a finite number ≥ 0 (got ${got(units)})`, what);
    assert.deepEqual(state(), before, `${what}: nothing changed`);
    assert.equal(r.settled, false, `${what}: the reservation is still open`);
  }

  test('reserve and extend (undefined means 1)', async () => {
    const { sentinel } = await ready();
    const r = sentinel.reserve(7);
    for (const [label, units] of NOT_UNITS) {
      assertRefused(sentinel, r, `reserve(${label})`, () => sentinel.reserve(units), 'units', units);
      assertRefused(sentinel, r, `extend(${label})`, () => r.extend(units), 'units', units);
    }
    assert.equal(r.extend(undefined), true);
    assert.equal(r.heldUnits, 8);
  });

  test('record, settle and charge (units required: undefined is refused too)', async () => {
    const { sentinel } = await ready();
    const r = sentinel.reserve(7);
    for (const [label, units] of [...NOT_UNITS, ['undefined', undefined]]) {
      assertRefused(sentinel, r, `record(${label})`, () => r.record(units), 'units', units);
      assertRefused(sentinel, r, `settle(${label})`, () => r.settle(units), 'actualUnits', units);
      assertRefused(sentinel, r, `charge(${label})`, () => sentinel.charge(units), 'units', units);
    }
    assertRefused(sentinel, r, 'record()', () => r.record(), 'units', undefined);
    assertRefused(sentinel, r, 'settle()', () => r.settle(), 'actualUnits', undefined);
    assertRefused(sentinel, r, 'charge()', () => sentinel.charge(), 'units', undefined);
    assert.equal(r.recordedUnits, 0, 'no refused record counted');
    r.settle(7);
    assert.deepEqual(ledger(sentinel), { exposure: 7, reserved: 0 }, 'a good settle after the refused ones');
  });
});

describe('record: work already produced leaves the hold and counts from that moment (node budget 200)', () => {
  test('reserve 40; record 30; a refresh sent after the record answers valid → 10; extend 30; record 35 → 40; settle at 66 → 1 more, 4 refunded, 36', async () => {
    const refreshes = await ready();
    const { sentinel } = refreshes;
    const r = sentinel.reserve(40);
    r.record(30);
    assert.deepEqual([r.heldUnits, r.recordedUnits], [10, 30]);
    assert.deepEqual(ledger(sentinel), { exposure: 40, reserved: 10 });
    await refreshes.answer('valid'); // sent before the record
    assert.deepEqual(ledger(sentinel), { exposure: 40, reserved: 10 }, 'an answer to a refresh sent before the record does not clear it');
    await refreshes.answer('valid'); // sent after the record
    assert.deepEqual(ledger(sentinel), { exposure: 10, reserved: 10 }, 'the recorded 30 cleared, the 10 held stay');
    assert.equal(r.extend(30), true);
    r.record(35);
    assert.deepEqual([r.heldUnits, r.recordedUnits], [5, 65]);
    assert.deepEqual(ledger(sentinel), { exposure: 40, reserved: 5 });
    r.settle(66);
    assert.deepEqual([r.heldUnits, r.recordedUnits, r.settled], [0, 65, true]);
    assert.deepEqual(ledger(sentinel), { exposure: 36, reserved: 0 });
    assert.deepEqual(reservationFamilies(scrapeText(sentinel)), { reserved: 0, refunded: 4, overage: 0 });
  });

  test('recorded past the hold is overage; settling below what was recorded takes nothing back and refunds the hold', async () => {
    const refreshes = await ready();
    const { sentinel } = refreshes;
    const over = sentinel.reserve(10);
    over.record(25);
    assert.deepEqual([over.heldUnits, over.recordedUnits], [0, 25]);
    assert.equal(over.extend(5), true, 'a reservation whose hold is spent can still extend');
    over.settle(25); // the whole usage: nothing new, the 5 refunded
    const under = sentinel.reserve(50);
    under.record(20);
    under.settle(5); // below what was recorded: the 20 stand, the 30 held are refunded
    assert.deepEqual(ledger(sentinel), { exposure: 45, reserved: 0 });
    assert.deepEqual(reservationFamilies(scrapeText(sentinel)), { reserved: 0, refunded: 35, overage: 15 });
    await refreshes.answer('valid'); // sent before every record
    assert.equal(sentinel.exposureUnits, 45);
    await refreshes.answer('valid');
    assert.equal(sentinel.exposureUnits, 0, 'recorded usage leaves like settled usage');
  });

  test('streams that record each chunk hold one chunk each: refreshes keep them going where holding whole answers is cut short', async () => {
    const refreshes = await ready();
    const { sentinel } = refreshes;
    // Five streams of 16-unit chunks, each extending one chunk ahead: 80 held, and 80 recorded
    // a round until a refresh sent after the records clears them.
    const streams = Array.from({ length: 5 }, () => sentinel.reserve(16));
    assert.ok(streams.every(Boolean), 'premise: all reserved');
    for (let round = 1; round <= 4; round++) {
      for (const r of streams) {
        r.record(16); // the chunk was sent
        assert.equal(r.extend(16), true, `round ${round}: the next chunk fits`);
      }
      assert.deepEqual(ledger(sentinel), { exposure: 160, reserved: 80 }, `round ${round}`);
      await refreshes.answer('valid'); // sent before this round's records
      await refreshes.answer('valid'); // sent after them: clears them
      assert.deepEqual(ledger(sentinel), { exposure: 80, reserved: 80 }, `after round ${round}`);
    }
    for (const r of streams) r.settle(r.recordedUnits);
    assert.deepEqual(ledger(sentinel), { exposure: 0, reserved: 0 }, 'each settled at what it recorded: the next chunk refunded');

    // The same streams holding their whole answer until the settle: the second round is refused.
    const holding = Array.from({ length: 5 }, () => sentinel.reserve(16));
    const cut = [];
    for (let round = 1; round <= 2; round++) {
      for (const r of holding) if (!r.extend(16)) cut.push(round);
      await refreshes.answer('valid');
      await refreshes.answer('valid');
    }
    assert.deepEqual(cut, [2, 2, 2], 'three of five cut short in round 2 (160 + 16 + 16 of 200), the authority healthy');
  });
});

describe('the ledger across refreshes (node budget 200)', () => {
  test('reserve 100; a refresh is sent; reserve 50; settle the first at 0; the valid answer lands → ledger 50 (the open one)', async () => {
    const refreshes = await ready();
    const { sentinel } = refreshes;
    const first = sentinel.reserve(100);
    await refreshes.answer('valid'); // …and the next refresh is sent
    const second = sentinel.reserve(50);
    first.settle(0);
    assert.deepEqual(ledger(sentinel), { exposure: 50, reserved: 50 }, 'the unused 100 left at once');
    await refreshes.answer('valid');
    assert.deepEqual(ledger(sentinel), { exposure: 50, reserved: 50 });
    await refreshes.answer('valid');
    assert.deepEqual(ledger(sentinel), { exposure: 50, reserved: 50 }, 'open: no answer clears it');
    second.settle(50);
    assert.deepEqual(ledger(sentinel), { exposure: 50, reserved: 0 });
  });

  test('reserve 60; a valid answer (the 60 stay); extend 40; settle at 50 → 50; the answer to the refresh sent before the settle keeps it; the next one → 0', async () => {
    const refreshes = await ready();
    const { sentinel } = refreshes;
    const r = sentinel.reserve(60);
    await refreshes.answer('valid');
    assert.deepEqual(ledger(sentinel), { exposure: 60, reserved: 60 }, 'held units survive a valid answer');
    assert.equal(r.extend(40), true);
    r.settle(50);
    assert.deepEqual(ledger(sentinel), { exposure: 50, reserved: 0 });
    await refreshes.answer('valid'); // sent before the settle
    assert.equal(sentinel.exposureUnits, 50, 'usage counts from the settle: a refresh in flight then does not clear it');
    await refreshes.answer('valid'); // sent after the settle
    assert.equal(sentinel.exposureUnits, 0);
  });

  test('reserve 100; a refresh is sent; settle at 150 (overage 50); the answer lands → ledger 150', async () => {
    const refreshes = await ready();
    const { sentinel } = refreshes;
    const r = sentinel.reserve(100);
    await refreshes.answer('valid');
    r.settle(150);
    assert.deepEqual(ledger(sentinel), { exposure: 150, reserved: 0 });
    await refreshes.answer('valid');
    assert.equal(sentinel.exposureUnits, 150, 'recorded after the send');
    assert.equal(sentinel.refusalReason(51), 'budget_exhausted');
    assert.equal(sentinel.admit(50), true, 'the ledger is 150: 50 more fit');
    await refreshes.answer('valid'); // sent after the settle, before the admission
    assert.equal(sentinel.exposureUnits, 50);
    await refreshes.answer('valid');
    assert.equal(sentinel.exposureUnits, 0);
  });

  test('indeterminate and denied answers clear nothing; charge records at once, past the budget, and leaves like settled usage', async () => {
    const refreshes = await ready();
    const { sentinel } = refreshes;
    const r = sentinel.reserve(120);
    sentinel.charge(90);
    assert.deepEqual(ledger(sentinel), { exposure: 210, reserved: 120 }, 'a charge never refuses, past the node budget too');
    assert.equal(sentinel.refusalReason(0), 'budget_exhausted');
    await refreshes.answer('indeterminate');
    await refreshes.answer('capability_missing');
    assert.deepEqual(ledger(sentinel), { exposure: 210, reserved: 120 });
    await refreshes.answer('valid'); // sent after the charge, before this valid answer
    assert.deepEqual(ledger(sentinel), { exposure: 120, reserved: 120 });
    r.release();
    assert.deepEqual(ledger(sentinel), { exposure: 0, reserved: 0 });
  });
});

describe('transitions and metrics', () => {
  test('an overage settle that spends the budget makes it degraded (budget_exhausted); refunding held units makes it ready again', async () => {
    const { sentinel, transitions } = await ready();
    const first = sentinel.reserve(100);
    const second = sentinel.reserve(80);
    const spending = transitions.next({ to: 'degraded' });
    first.settle(120); // 120 recorded + 80 held = the node budget
    const spent = await spending;
    assert.deepEqual([spent.from, spent.reason], ['ready', 'budget_exhausted']);
    assert.equal(second.extend(1), false, 'a spent budget refuses the units that do not fit');
    const freeing = transitions.next({ to: 'ready' });
    second.release(); // the 80 leave at once: 120 of 200
    const freed = await freeing;
    assert.deepEqual([freed.from, freed.reason], ['degraded', 'verified']);
    assert.equal(sentinel.exposureUnits, 120);
    assert.equal(sentinel.admit(80), true);
  });

  test('metrics: reserved units, refunded and overage counters, in text and OpenMetrics; reserve and extend count as admitted', async () => {
    const { sentinel } = await ready();
    const first = scrapeText(sentinel);
    assert.deepEqual(reservationFamilies(first), { reserved: 0, refunded: 0, overage: 0 }, 'from the first scrape, at 0');

    sentinel.reserve(100).settle(40); // refunds 60
    sentinel.reserve(10).settle(25); // 15 over
    sentinel.charge(5); // 5 over
    const open = sentinel.reserve(30);
    assert.equal(open.extend(2.5), true);
    assert.equal(sentinel.reserve(1000), null);

    const text = scrapeText(sentinel);
    assert.deepEqual(reservationFamilies(text), { reserved: 32.5, refunded: 60, overage: 20 });
    assert.deepEqual(
      ['spend_sentinel_reserved_units', 'spend_sentinel_refunded_units_total', 'spend_sentinel_overage_units_total'].map((n) => text.get(n).type),
      ['gauge', 'counter', 'counter'],
    );
    assert.equal(valueOf(text, 'spend_sentinel_reserved_units'), sentinel.reservedUnits);
    assert.equal(valueOf(text, 'spend_sentinel_exposure_units'), sentinel.exposureUnits, 'held units are part of the exposure');
    assert.equal(valueOf(text, 'spend_sentinel_admitted_units_total', { status: 'ready' }), 142.5, 'reserve and extend admit');
    assert.equal(valueOf(text, 'spend_sentinel_refused_units_total', { reason: 'budget_exhausted' }), 1000, 'a refused reserve');

    const om = readOpenMetrics(sentinel.metrics({ format: 'openmetrics' }));
    const omValue = (family, sample) => {
      const [s] = om.get(family).samples.filter((x) => x.name === sample);
      return [om.get(family).type, s.value];
    };
    assert.deepEqual(omValue('spend_sentinel_reserved_units', 'spend_sentinel_reserved_units'), ['gauge', 32.5]);
    assert.deepEqual(omValue('spend_sentinel_refunded_units', 'spend_sentinel_refunded_units_total'), ['counter', 60]);
    assert.deepEqual(omValue('spend_sentinel_overage_units', 'spend_sentinel_overage_units_total'), ['counter', 20]);

    open.release();
    assert.deepEqual(reservationFamilies(scrapeText(sentinel)), { reserved: 0, refunded: 92.5, overage: 20 });
  });
});

describe('after close, and who may make a reservation', () => {
  test('settle and charge after close record without error; extend answers false and reserve null', async () => {
    const { sentinel } = await ready();
    const settled = sentinel.reserve(40);
    const released = sentinel.reserve(10);
    const extended = sentinel.reserve(5);
    sentinel.close();
    assert.equal(sentinel.reserve(1), null);
    assert.equal(sentinel.reserve(0), null);
    assert.equal(extended.extend(1), false);
    assert.equal(extended.heldUnits, 5);
    settled.settle(55);
    released.release();
    sentinel.charge(3);
    assert.deepEqual(ledger(sentinel), { exposure: 63, reserved: 5 }, 'recorded after close: 55 + 3 + the 5 still held');
    extended.record(2);
    assert.deepEqual([extended.heldUnits, extended.recordedUnits], [3, 2]);
    assert.deepEqual(ledger(sentinel), { exposure: 63, reserved: 3 }, 'record after close: 2 move from held to recorded');
    assert.equal(sentinel.admit(0), false, 'nothing admitted');
    assert.deepEqual(reservationFamilies(scrapeText(sentinel)), { reserved: 3, refunded: 10, overage: 18 });
  });

  test('a reservation of one sentinel settles in its own ledger only', async () => {
    const a = (await ready()).sentinel;
    const b = (await ready()).sentinel;
    const ra = a.reserve(10);
    const rb = b.reserve(20);
    rb.settle(5);
    ra.extend(1);
    assert.deepEqual([ledger(a), ledger(b)], [{ exposure: 11, reserved: 11 }, { exposure: 5, reserved: 0 }]);
  });

  test('Reservation is exported for instanceof checks only: new Reservation() throws; reserve on anything but a Sentinel is a TypeError', async () => {
    assert.equal((await import('spend-sentinel')).Reservation, Reservation, 'the same class through import');
    for (const make of [() => new Reservation(), () => new Reservation(Symbol('spend-sentinel reservation'), {}, 1)]) {
      const err = catchError(make);
      assert.ok(err instanceof TypeError, String(err));
      assert.match(err.message, /sentinel\.reserve/);
    }
    for (const receiver of [{}, null, undefined, Sentinel.prototype, Object.create(Sentinel.prototype)]) {
      const err = catchError(() => Sentinel.prototype.reserve.call(receiver, 1));
      assert.ok(err instanceof TypeError, `reserve on ${String(receiver)}: ${err}`);
      assert.match(err.message, /must be called on a Sentinel/);
    }
    const { sentinel } = await ready();
    assert.ok(Sentinel.prototype.reserve.call(sentinel, 1) instanceof Reservation, 'on a sentinel it works');
  });
});
