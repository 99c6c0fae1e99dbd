'use strict';
// One HTTP probe, for the `spend-sentinel probe` CLI (Docker HEALTHCHECK has no curl).

const http = require('node:http');
const https = require('node:https');
const dns = require('node:dns');

const MAX_BODY_BYTES = 4096; // Docker keeps only the first 4 KiB of a healthcheck's output

/**
 * `localhost` means the loopback interface (RFC 6761), whichever family the server listens on:
 * many /etc/hosts files map it only to 127.0.0.1, which misses a server bound to [::1] alone.
 * Offering both addresses lets Node's happy-eyeballs connect (autoSelectFamily) use whichever
 * answers. Other names resolve as usual.
 */
function lookupLoopbackBoth(hostname, options, callback) {
  const name = hostname.toLowerCase();
  if (name !== 'localhost' && !name.endsWith('.localhost')) return dns.lookup(hostname, options, callback);
  const both = [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ];
  if (options.all) return callback(null, both);
  const wanted = both.find((a) => !options.family || a.family === options.family) ?? both[0];
  return callback(null, wanted.address, wanted.family);
}

/**
 * GETs `url`, the whole exchange bounded by `timeoutMs`. Resolves `{ statusCode, body }` or
 * `{ error }` (a short message); never rejects.
 */
function probe(url, { timeoutMs }) {
  return new Promise((resolve) => {
    const client = url.protocol === 'https:' ? https : http;
    const request = client.get(url, {
      lookup: lookupLoopbackBoth,
      autoSelectFamily: true,
      headers: { accept: 'application/json', connection: 'close' },
    });
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const finish = (result) => {
      clearTimeout(timer);
      resolve(result);
    };
    request.once('error', (err) => finish({ error: describeError(err) }));
    request.once('response', (res) => {
      const chunks = [];
      let size = 0;
      res.on('data', (chunk) => {
        if (size < MAX_BODY_BYTES) chunks.push(chunk);
        size += chunk.length;
      });
      res.once('end', () => {
        const body = Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
        finish({ statusCode: res.statusCode, body });
      });
      res.once('error', (err) => finish({ error: err.message }));
    });
  });
}

/** Happy-eyeballs failures arrive as an AggregateError with an empty message: list each attempt. */
function describeError(err) {
  if (Array.isArray(err.errors) && err.errors.length > 0) return err.errors.map(describeError).join('; ');
  return err.message || err.code || 'request failed';
}

module.exports = { probe, lookupLoopbackBoth };
