'use strict';
// Express 5 glue: `app.use(probes(sentinel))` first, `admission(sentinel)` on metered routes,
// `gracefulShutdown(server, sentinel)` once listening. The rules live in probes.js,
// admission.js and shutdown.js; this file only reads Express requests and writes responses.

const { createProbes } = require('./probes');
const { createAdmission } = require('./admission');
const { gracefulShutdown: shutdownFor } = require('./shutdown');
const { sendJson, isDeep } = require('./http-answer');

/**
 * Middleware answering GET/HEAD on the three probe paths and passing every other request on
 * untouched. Mount it before rate limiters, auth and CORS so probes never meet them.
 */
function probes(sentinel, options) {
  const p = createProbes('probes', sentinel, options);
  function spendSentinelProbes(req, res, next) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const probe = p.route(req.path);
    if (probe === undefined) return next();
    if (probe !== 'live' || !isDeep(req.url)) return sendJson(req, res, p[probe]());
    p.live(true).then((answer) => sendJson(req, res, answer), next);
  }
  spendSentinelProbes.close = p.close;
  return spendSentinelProbes;
}

/** Middleware for routes that record usage: next() when admitted, else 503 + Retry-After. */
function admission(sentinel, options) {
  const decide = createAdmission('admission', sentinel, options);
  return function spendSentinelAdmission(req, res, next) {
    let refused;
    try {
      refused = decide(req);
    } catch (err) {
      return next(err);
    }
    if (refused === null) return next();
    sendJson(req, res, refused);
  };
}

/** SIGTERM/SIGINT → drain, wait, close the server, close the sentinel, exit 0. */
function gracefulShutdown(server, sentinel, options) {
  return shutdownFor('gracefulShutdown', server, sentinel, options);
}

module.exports = { probes, admission, gracefulShutdown };
