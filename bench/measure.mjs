// Timing helpers shared by the benchmarks. They print; they assert nothing.

/** Median ns per call of `fn` over `runs` runs of `calls` calls (after one warm-up run). */
export function measure(fn, { calls = 2_000_000, runs = 7 } = {}) {
  const samples = [];
  for (let run = -1; run < runs; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fn();
    const ns = Number(process.hrtime.bigint() - start) / calls;
    if (run >= 0) samples.push(ns);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

/**
 * Median ns per call of `await fn()` over `runs` runs of `calls` sequential calls (after one
 * warm-up run). `setup()`, when given, runs untimed before each run (e.g. to build fresh state).
 */
export async function measureAsync(fn, { calls = 200_000, runs = 7, setup } = {}) {
  const samples = [];
  for (let run = -1; run < runs; run++) {
    if (setup) await setup();
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await fn();
    const ns = Number(process.hrtime.bigint() - start) / calls;
    if (run >= 0) samples.push(ns);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

/** Prints `rows` ([name, value]) as a markdown table with each value's ratio to the first row's. */
export function printRatios(title, unit, rows) {
  const base = rows[0][1];
  console.log(title);
  console.log(`| call | ${unit} | × ${rows[0][0]} |`);
  console.log('|---|---:|---:|');
  for (const [name, value] of rows) console.log(`| ${name} | ${value.toFixed(1)} | ${(value / base).toFixed(2)} |`);
}
