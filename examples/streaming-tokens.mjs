// A streamed model answer under a token budget:  node examples/streaming-tokens.mjs
// (env: see sentinel-from-env.mjs; here a unit is a token, so SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS
// is b in tokens).
//   curl -N localhost:3000/v1/complete -H 'x-api-key: demo-key' -H 'content-type: application/json' \
//        -d '{"prompt":"tell me about budgets"}'
// The answer comes as server-sent events: `data: {"text":…}` per chunk, then one last event
// carrying `finish_reason`: "stop" when the model finished, "budget" when the budget cut it short.
// An answer's length is known only once it is written. So the guard reserves the prompt and one
// chunk; the route records each chunk once it is sent (that usage can then be cleared by the next
// valid refresh) and extends one chunk ahead before the model produces the next. A stream holds
// about one chunk, not its whole answer, and the guard settles the whole usage at the end.
import { setTimeout as modelThinking } from 'node:timers/promises';
import express from 'express';
import { probes, admission, gracefulShutdown } from 'spend-sentinel/express';
import { sentinelFromEnv, port, shutdownOptions, API_KEYS } from './sentinel-from-env.mjs';

const MAX_CHUNK = 8; // tokens the model produces at most between two pauses: what a stream holds ahead

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

/** One server-sent event. */
const event = (data) => `data: ${JSON.stringify(data)}\n\n`;

app.post(
  '/v1/complete',
  admission(sentinel, {
    // The prompt, and one chunk ahead: a request that cannot even start gets its 503 now.
    units: (req) => promptTokens(req) + MAX_CHUNK,
    // The whole usage, read when the response has ended (or the client left): the prompt and the
    // tokens recorded as sent. Only the prompt is new; what is still held is refunded at once.
    settle: (req, res) => promptTokens(req) + res.locals.spendReservation.recordedUnits,
  }),
  async (req, res) => {
    const reservation = res.locals.spendReservation;
    res.type('text/event-stream');
    for await (const chunk of modelAnswer()) {
      if (res.destroyed) return; // the client left: the guard settled what was sent
      res.write(event({ text: `${chunk.join(' ')} ` }));
      reservation.record(chunk.length); // after the work, never before: these tokens were sent
      // Hold one chunk ahead again before the model produces it; refused, stop and say why.
      if (!reservation.extend(chunk.length)) return res.end(event({ finish_reason: 'budget' }));
    }
    res.end(event({ finish_reason: 'stop' }));
  },
);

const server = app.listen(port, () => {
  console.log(`streaming service listening on ${server.address().port}`);
});
// SIGTERM: open streams may finish; any cut at the timeout is settled at what it had sent.
gracefulShutdown(server, sentinel, shutdownOptions);
