// An Express 5 metering service wired end to end:  node examples/express-service.mjs
// (env: see sentinel-from-env.mjs). The order of app.use() is the point:
//   probes first, so kubelet probes never meet the rate limiter, the auth check or CORS.
import express from 'express';
import cors from 'cors';
import { rateLimit } from 'express-rate-limit';
import { probes, admission, gracefulShutdown } from 'spend-sentinel/express';
import { sentinelFromEnv, port, shutdownOptions, API_KEYS, unitsOf } from './sentinel-from-env.mjs';

const sentinel = sentinelFromEnv();
const app = express();

app.use(probes(sentinel)); //                       /ready /live /startup: before everything else
app.use(cors());
app.use(rateLimit({ windowMs: 60_000, limit: 600 })); // per client IP
app.use((req, res, next) => (API_KEYS.has(req.get('x-api-key')) ? next() : res.status(401).json({ error: 'unauthorized' })));
app.use(express.json());

let recorded = 0;
app.post(
  '/v1/usage',
  admission(sentinel, { units: (req) => unitsOf(req.body) }), // 503 + Retry-After when not admitted
  (req, res) => {
    recorded += unitsOf(req.body); // record usage only after admission said yes
    res.json({ recorded: unitsOf(req.body), total: recorded });
  },
);

const server = app.listen(port, () => {
  console.log(`express service listening on ${server.address().port}`);
});
gracefulShutdown(server, sentinel, shutdownOptions);
