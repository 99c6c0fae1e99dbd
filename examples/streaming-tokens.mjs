// A streamed model answer under a token budget:  node examples/streaming-tokens.mjs
// (env: see sentinel-from-env.mjs; here a unit is a token, so SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS
// is b in tokens).
//   curl -N localhost:3000/v1/complete -H 'x-api-key: demo-key' -H 'content-type: application/json' \
//        -d '{"prompt":"tell me about budgets"}'
// An answer's length is known only once it is written. So the guard reserves the prompt and a
// first chunk, the route extends the reservation before each further chunk, and the guard settles
// the true count when the response ends or the client goes away: nothing guessed, nothing lost.
import { setTimeout as modelThinking } from 'node:timers/promises';
import express from 'express';
import { probes, admission, gracefulShutdown } from 'spend-sentinel/express';
import { sentinelFromEnv, port, shutdownOptions, API_KEYS } from './sentinel-from-env.mjs';

const MAX_CHUNK = 8; // tokens the model produces at most between two pauses
const CUT_SHORT = '\n[cut short: token budget]\n'; // the last line when an extend was refused
const DONE = '\n[done]\n';

const sentinel = sentinelFromEnv();
const app = express();

app.use(probes(sentinel)); //                       /ready /live /startup: before everything else
// No API key for the scraper. spend_sentinel_reserved_units shows what open streams hold (a value
// that never returns to 0 is a reservation nobody settled); refunded and overage count the settles.
app.get('/metrics', (req, res) => res.type('text/plain; version=0.0.4').send(sentinel.metrics()));
app.use((req, res, next) => (API_KEYS.has(req.get('x-api-key')) ? next() : res.status(401).json({ error: 'unauthorized' })));
app.use(express.json());

/** A stand-in tokenizer: one token per word. */
const countTokens = (text) => text.split(/\s+/).filter(Boolean).length;
const promptTokens = (req) => countTokens(String(req.body?.prompt ?? ''));

/** A stand-in model: an answer of 20–80 tokens, unknown until its end, a few tokens at a time. */
async function* modelAnswer() {
  const words = ['the', 'budget', 'holds', 'while', 'tokens', 'stream', 'and', 'settles', 'after'];
  for (let left = 20 + Math.floor(Math.random() * 61); left > 0; ) {
    const size = Math.min(left, 1 + Math.floor(Math.random() * MAX_CHUNK));
    left -= size;
    await modelThinking(5);
    yield Array.from({ length: size }, () => words[Math.floor(Math.random() * words.length)]);
  }
}

app.post(
  '/v1/complete',
  admission(sentinel, {
    // The prompt, and room for the first chunk: a request that cannot even start gets its 503 now.
    units: (req) => promptTokens(req) + MAX_CHUNK,
    // The true count, read when the response has ended (or the client left): the unused part of
    // the reservation is refunded at once.
    settle: (req, res) => promptTokens(req) + res.locals.tokens,
  }),
  async (req, res) => {
    const reservation = res.locals.spendReservation;
    res.locals.tokens = 0;
    res.type('text/plain; charset=utf-8');
    for await (const chunk of modelAnswer()) {
      if (res.destroyed) return; // the client left: the guard settles what it was sent
      // The first chunk is paid by the reservation itself; every later one is admitted first.
      const paid = res.locals.tokens === 0 || reservation.extend(chunk.length);
      if (!paid) return res.end(CUT_SHORT); // what was written was admitted; produce no more
      res.locals.tokens += chunk.length;
      res.write(`${chunk.join(' ')} `);
    }
    res.end(DONE);
  },
);

const server = app.listen(port, () => {
  console.log(`streaming service listening on ${server.address().port}`);
});
// SIGTERM: open streams may finish; any cut at the timeout is settled at what it had sent.
gracefulShutdown(server, sentinel, shutdownOptions);
