// Real HTTP traffic into one node: POST /v1/usage at a steady rate (1 unit each) over a
// keep-alive agent, counting what admission admitted and refused, and GET /ready for samples.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** Sends `perSecond` POSTs a second, on a fixed schedule (a late timer does not lower the rate). */
export function startLoad(baseUrl, perSecond) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const counts = { admitted: 0, refused: 0, failed: 0, reasons: {} };
  const refusals = []; // { at (performance.now() when the 503 arrived), reason }, for the timeline
  const inFlight = new Set();
  const origin = performance.now();
  let sent = 0;
  let timer = null;

  const post = () => {
    const done = request(`${baseUrl}/v1/usage`, 'POST', agent).then(
      ({ status, json }) => {
        if (status === 200) counts.admitted += 1;
        else if (status === 503) {
          counts.refused += 1;
          counts.reasons[json.reason] = (counts.reasons[json.reason] ?? 0) + 1;
          refusals.push({ at: performance.now(), reason: json.reason });
        } else counts.failed += 1;
      },
      () => (counts.failed += 1),
    );
    inFlight.add(done);
    done.finally(() => inFlight.delete(done));
  };

  const schedule = () => {
    sent += 1;
    const due = origin + (sent * 1000) / perSecond;
    timer = setTimeout(() => {
      post();
      schedule();
    }, Math.max(0, due - performance.now()));
  };
  schedule();

  return {
    counts,
    refusals,
    /** Stops sending, waits for the answers still on their way, and closes the sockets. */
    async stop() {
      clearTimeout(timer);
      await Promise.allSettled([...inFlight]);
      agent.destroy();
    },
  };
}

/** GET /ready: the body the probe serves ({ status, evidence_age_seconds, reason }). */
export function readReady(baseUrl, agent) {
  return request(`${baseUrl}/ready`, 'GET', agent).then(({ json }) => json);
}

function request(url, method, agent) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { 'content-length': 0 } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => (body += d));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode, json: JSON.parse(body) });
        } catch (err) {
          reject(err);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
