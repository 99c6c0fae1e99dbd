'use strict';
// Express 5 glue: `app.use(probes(sentinel))` first, `admission(sentinel)` on metered routes,
// `gracefulShutdown(server, sentinel)` once listening. The rules live in probes.js,
// admission.js and shutdown.js; this file only reads Express requests and writes responses.

const { createProbes } = require('./probes');
const { createAdmission } = require('./admission');
const { Reservation } = require('./reservation');
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

/**
 * Middleware for routes that record usage: next() when admitted, else the guard's JSON answer (503
 * + Retry-After; 400 for units that are not units; 413 for units above the node budget). With
 * `settle`, the units are reserved instead (`res.locals.spendReservation`) and settled once the
 * response is over.
 */
function admission(sentinel, options) {
  const guard = createAdmission('admission', sentinel, options, logSettleFailure);
  return guard.decide === undefined ? reservingAdmission(guard) : admitting(guard.decide);
}

function admitting(decide) {
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

/**
 * Settles on the response's 'finish' (all of it handed to the socket) or its 'close' (the
 * connection closed first, e.g. a client gone mid-stream), whichever comes first; the later
 * event finds the reservation settled and does nothing.
 */
function reservingAdmission({ reserve, settleAtEnd }) {
  return function spendSentinelAdmission(req, res, next) {
    // The client left while an earlier middleware ran: the response has closed, so no event
    // would ever settle a reservation, and nobody waits for the route's answer. Stop here.
    if (res.destroyed) return;
    let answer;
    try {
      answer = reserve(req);
    } catch (err) {
      return next(err);
    }
    if (!(answer instanceof Reservation)) return sendJson(req, res, answer);
    res.locals.spendReservation = answer;
    const settle = () => settleAtEnd(answer, req, res);
    res.on('finish', settle);
    res.on('close', settle);
    next();
  };
}

/** Express has no logger of its own: a failed `settle` goes to stderr, as a failed shutdown hook does. */
function logSettleFailure(_req, { err }, msg) {
  console.error(msg, err);
}

/** SIGTERM/SIGINT → drain, wait, close the server, close the sentinel, exit 0. */
function gracefulShutdown(server, sentinel, options) {
  return shutdownFor('gracefulShutdown', server, sentinel, options);
}

module.exports = { probes, admission, gracefulShutdown };
