'use strict';
// Writes a probe or refusal answer `{ statusCode, headers?, body }` on a node:http response.

const BASE_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

function sendJson(req, res, { statusCode, headers, body }) {
  const json = JSON.stringify(body);
  res.writeHead(statusCode, { ...BASE_HEADERS, ...headers, 'content-length': Buffer.byteLength(json) });
  res.end(req.method === 'HEAD' ? undefined : json);
}

/** `?deep=1` (or `deep=true`) on the liveness probe; cheap on the common, query-less probe. */
function isDeep(url) {
  const q = url.indexOf('?');
  if (q === -1) return false;
  const deep = new URLSearchParams(url.slice(q + 1)).get('deep');
  return deep === '1' || deep === 'true';
}

module.exports = { sendJson, isDeep, BASE_HEADERS };
