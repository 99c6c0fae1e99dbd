// The fake account authority: a node:http server on 127.0.0.1 that the sentinels refresh from.
// Modes: 'answering' (200 with the capability), 'silent' (accepts the request, never replies:
// the refresh times out), 'revoked' (401: the credential is no longer valid).
// It logs every refresh per node (`?node=` in the URL tells the callers apart) so the demo can
// show, independently of the sentinels, when each node's evidence was last confirmed.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const CAPABLE = JSON.stringify({ capabilities: ['meter.requests'] });
const REVOKED = JSON.stringify({ error: 'credential revoked' });

export async function startAuthority() {
  let mode = 'answering';
  const held = new Set(); // sockets of requests left unanswered while silent
  const log = []; // { node, at (performance.now()), answer: 'valid' | 'held' | 'revoked' }

  const server = http.createServer((req, res) => {
    const node = new URL(req.url, 'http://authority').searchParams.get('node');
    const entry = { node, at: performance.now(), answer: mode === 'silent' ? 'held' : mode === 'revoked' ? 'revoked' : 'valid' };
    log.push(entry);
    if (mode === 'silent') {
      held.add(req.socket);
      req.socket.once('close', () => held.delete(req.socket));
      return;
    }
    const body = mode === 'revoked' ? REVOKED : CAPABLE;
    res.writeHead(mode === 'revoked' ? 401 : 200, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}/v1/account`;

  return {
    urlFor: (node) => `${base}?node=${encodeURIComponent(node)}`,
    log,
    get mode() {
      return mode;
    },
    setMode(next) {
      // Coming back like a restarted server: the connections it held are reset, so a refresh
      // caught in the silence ends now (indeterminate) instead of waiting out its timeout.
      if (mode === 'silent' && next !== 'silent') for (const socket of held) socket.destroy();
      mode = next;
    },
    /** When the authority last answered `node` with a valid answer before `before` (performance.now()). */
    lastValid(node, before) {
      return log.findLast((e) => e.node === node && e.answer === 'valid' && e.at < before)?.at ?? null;
    },
    close() {
      for (const socket of held) socket.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
