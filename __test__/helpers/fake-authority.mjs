// A fake "authority" (docs/http-adapter.md) for the HTTP adapter tests.
//
// One fake = one plain-HTTP listener and one HTTPS listener on 127.0.0.1, ephemeral ports, sharing
// the same behaviour and the same request log. The test switches the behaviour at any moment with
// `respondWith(reply.xxx(...))`; the behaviour is chosen when a request *arrives*, so a switch
// affects the next request the sentinel sends, never one already answered.
//
// Tests never sleep to "give the sentinel time": they await `nextRequest()` / `waitForRequests(n)`
// (or `waitForTlsFailures(n)`), which resolve on the server event itself and reject after a generous
// bound so a broken addon fails the test instead of hanging it.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { closedPort, withTimeout } from './wait.mjs';

const fixture = (name) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

/** PEM fixtures (see ../fixtures/README.md): a test CA and a 127.0.0.1/localhost server cert it signed. */
export const TLS = Object.freeze({
  caPem: fixture('ca.pem'),
  certPem: fixture('server-cert.pem'),
  keyPem: fixture('server-key.pem'),
});

const DEFAULT_WAIT_MS = 5000;

/**
 * Behaviours. Each returns a `(req, res) => void` handler.
 * "missing pointer" and "wrong type" are plain `json(...)` answers: the test picks a body that does
 * not match its `capabilitiesPointer`.
 */
export const reply = {
  /** A status with a JSON body (pass a string to send it verbatim, e.g. deliberately broken JSON). */
  json(status, body, headers = {}) {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return (req, res) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(text);
    };
  },

  /** A non-JSON body (e.g. an HTML error page from a proxy that still says 200). */
  text(status, text, contentType = 'text/plain') {
    return (req, res) => {
      res.writeHead(status, { 'content-type': contentType });
      res.end(text);
    };
  },

  /**
   * A JSON document of exactly `totalBytes` bytes that would otherwise be a valid answer (`body` plus
   * a padding member), streamed with chunked transfer encoding in `chunkBytes` pieces, one per event
   * loop turn. No content-length: the client must count what it reads, not trust a header.
   */
  paddedJson(status, body, totalBytes, { chunkBytes = 8192 } = {}) {
    const bytes = paddedJsonBytes(body, totalBytes);
    return (req, res) => {
      res.on('error', () => {}); // the client may hang up mid-body once it has seen too much
      res.writeHead(status, { 'content-type': 'application/json' });
      streamChunks(res, bytes, chunkBytes);
    };
  },

  /** Accept the connection, read the request, never answer. */
  hang() {
    return () => {};
  },

  /** Send the status line and headers plus the start of a body, then stall the body forever. */
  stallBody() {
    return (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"capabilities":['); // flushes the headers and a partial body, then nothing more
    };
  },

  /** A redirect (302 by default) to `location`, e.g. another fake that would answer `valid`. */
  redirect(location, status = 302) {
    return (req, res) => {
      res.writeHead(status, { location, 'content-type': 'text/plain' });
      res.end(`see ${location}`);
    };
  },
};

/** `body` + a `pad` member sized so that the serialised JSON is exactly `totalBytes` bytes. */
export function paddedJsonBytes(body, totalBytes) {
  const empty = Buffer.byteLength(JSON.stringify({ ...body, pad: '' }));
  if (totalBytes < empty) throw new RangeError(`totalBytes must be at least ${empty}`);
  const bytes = Buffer.from(JSON.stringify({ ...body, pad: 'x'.repeat(totalBytes - empty) }));
  if (bytes.length !== totalBytes) throw new Error('padding arithmetic is wrong'); // guards the fixture itself
  return bytes;
}

async function streamChunks(res, bytes, chunkBytes) {
  for (let i = 0; i < bytes.length; i += chunkBytes) {
    if (res.destroyed) return; // client gave up (e.g. body cap reached): stop quietly
    if (!res.write(bytes.subarray(i, i + chunkBytes))) {
      await Promise.race([once(res, 'drain'), once(res, 'close')]);
    }
    await new Promise((resolve) => setImmediate(resolve)); // separate writes, so really several chunks
  }
  if (!res.destroyed) res.end();
}

/**
 * Starts the fake. `httpPort` lets a test bring the authority up on a port that refused
 * connections a moment ago (to watch the sentinel recover from "connection refused").
 */
export async function startFakeAuthority({ path = '/v1/account', httpPort = 0 } = {}) {
  let behaviour = reply.json(200, { capabilities: [] });
  const requests = [];
  const tlsFailures = [];
  const waiters = new Set(); // { check(): boolean } re-evaluated after every recorded event
  const sockets = new Set();

  const notify = () => {
    for (const w of waiters) w.check();
  };

  const handle = (protocol) => (req, res) => {
    requests.push({ protocol, method: req.method, path: req.url, headers: { ...req.headers }, at: performance.now() });
    req.on('error', () => {}); // the sentinel aborting a hung request is expected, not a test failure
    res.on('error', () => {});
    behaviour(req, res);
    notify();
  };

  const track = (server) => {
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    return server;
  };

  const httpServer = track(http.createServer(handle('http')));
  const httpsServer = track(https.createServer({ key: TLS.keyPem, cert: TLS.certPem }, handle('https')));
  // A client that does not trust our CA aborts the handshake; this is the only trace such a
  // refresh leaves on the server, so it is recorded like a request.
  httpsServer.on('tlsClientError', (err) => {
    tlsFailures.push({ code: err.code, message: err.message, at: performance.now() });
    notify();
  });

  await listen(httpServer, httpPort);
  await listen(httpsServer, 0);

  /** Resolves with `value()` once `ready()` holds (checked now and after every event). */
  function waitUntil(ready, value, label, ms) {
    if (ready()) return Promise.resolve(value());
    let resolve;
    const promise = new Promise((r) => (resolve = r));
    const waiter = {
      check() {
        if (!ready()) return;
        waiters.delete(waiter);
        resolve(value());
      },
    };
    waiters.add(waiter);
    return withTimeout(promise, ms, label).finally(() => waiters.delete(waiter));
  }

  return {
    url: `http://127.0.0.1:${httpServer.address().port}${path}`,
    httpsUrl: `https://127.0.0.1:${httpsServer.address().port}${path}`,
    /** Every request seen, oldest first: { protocol, method, path, headers, at }. */
    requests,
    /** Every failed TLS handshake on the HTTPS listener: { code, message, at }. */
    tlsFailures,

    /** Switch the behaviour for every request that arrives from now on. */
    respondWith(next) {
      behaviour = next;
    },
    /** The first request that arrives after this call. */
    nextRequest(ms = DEFAULT_WAIT_MS) {
      const index = requests.length;
      return waitUntil(() => requests.length > index, () => requests[index], 'the next request', ms);
    },
    /** Resolves with the request log once it holds at least `n` requests in total. */
    waitForRequests(n, ms = DEFAULT_WAIT_MS) {
      return waitUntil(() => requests.length >= n, () => requests, `${n} requests (saw ${requests.length})`, ms);
    },
    /** Resolves once at least `n` TLS handshakes have failed in total. */
    waitForTlsFailures(n, ms = DEFAULT_WAIT_MS) {
      return waitUntil(() => tlsFailures.length >= n, () => tlsFailures, `${n} failed TLS handshakes`, ms);
    },
    /** Stops both listeners and destroys every open socket (hung requests included). Idempotent. */
    async close() {
      const closed = [httpServer, httpsServer].filter((s) => s.listening).map((s) => once(s, 'close'));
      for (const s of [httpServer, httpsServer]) if (s.listening) s.close();
      for (const socket of sockets) socket.destroy();
      await Promise.all(closed);
    },
  };
}

async function listen(server, port) {
  server.listen(port, '127.0.0.1');
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err))]);
}

/** An http URL on 127.0.0.1 where nothing listens: connecting to it is refused. */
export async function refusedUrl(path = '/v1/account') {
  return `http://127.0.0.1:${await closedPort()}${path}`;
}
