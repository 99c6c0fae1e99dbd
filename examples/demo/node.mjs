// One metering service of the demo fleet: a sentinel configured as the README's seed example (or
// with the `budget` given, e.g. a `budget.fleet` for `--fleet`) and an Express 5 app with the
// probes mounted first and the admission guard on POST /v1/usage, listening on its own ephemeral
// port on 127.0.0.1. `onAdmitted()` runs, synchronously, for each request admission let through.
import { createRequire } from 'node:module';
import express from 'express';
import { probes, admission } from 'spend-sentinel/express';

const { Sentinel } = createRequire(import.meta.url)('spend-sentinel');

/** The seed example: b = 200 units across 2 nodes at r = 20 units/s → 100 units, 5 s each. */
export const BUDGET = Object.freeze({ unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2 });

export async function startNode(name, authorityUrl, { budget = BUDGET, onAdmitted = () => {} } = {}) {
  const sentinel = new Sentinel({
    budget, // and the default refresh cadence
    authority: {
      url: authorityUrl,
      allowInsecureHttp: true, // the fake authority is local plain HTTP; a real one is https
      credential: 'sk_demo_not_a_real_key',
      requiredCapability: 'meter.requests',
    },
  });
  const probeRoutes = probes(sentinel);
  const app = express();
  app.use(probeRoutes); // GET /ready /live /startup, before anything else

  let maxUnverified = 0; // the ledger only grows on admission, so this sees its peak
  app.post('/v1/usage', admission(sentinel), (req, res) => {
    maxUnverified = Math.max(maxUnverified, sentinel.exposureUnits);
    onAdmitted();
    res.json({ recorded: 1 }); // a real service records the usage here, after admission said yes
  });

  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));

  return {
    name,
    sentinel,
    url: `http://127.0.0.1:${server.address().port}`,
    get maxUnverified() {
      return maxUnverified;
    },
    /** Closes the sentinel (with a fleet: awaits the release of its grant) and the server. */
    async close() {
      const released = sentinel.close();
      probeRoutes.close();
      server.closeAllConnections();
      await Promise.all([released, new Promise((resolve) => server.close(resolve))]);
    },
  };
}
