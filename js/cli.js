#!/usr/bin/env node
'use strict';
// `spend-sentinel <command>`. Exit codes follow Docker HEALTHCHECK: 0 healthy, 1 anything else
// (a usage error included: Docker reserves 2).

const { parseArgs } = require('node:util');
const { probe } = require('./probe-client');

const USAGE = 'usage: spend-sentinel probe <url> [--timeout-ms N]   (exit 0 on a 2xx answer, 1 otherwise)';

const COMMANDS = {
  async probe(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { 'timeout-ms': { type: 'string', default: '3000' } },
      allowPositionals: true,
    });
    if (positionals.length !== 1) throw new UsageError('probe: expects exactly one <url>');
    const url = parseUrl(positionals[0]);
    const timeoutMs = Number(values['timeout-ms']);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError('probe: --timeout-ms: must be a number of milliseconds > 0');
    const result = await probe(url, { timeoutMs });
    if (result.error) {
      process.stderr.write(`spend-sentinel probe: ${result.error}\n`);
      return 1;
    }
    process.stdout.write(`${result.statusCode} ${result.body}\n`);
    return result.statusCode >= 200 && result.statusCode < 300 ? 0 : 1;
  },
};

class UsageError extends Error {}

function parseUrl(text) {
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError('probe: <url>: must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('probe: <url>: must use http or https');
  return url;
}

async function main(argv) {
  const [command, ...rest] = argv;
  const run = Object.hasOwn(COMMANDS, command ?? '') ? COMMANDS[command] : undefined;
  if (!run) throw new UsageError(command ? `unknown command "${command}"` : 'missing command');
  return run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    const message = err instanceof UsageError || err.code?.startsWith('ERR_PARSE_ARGS') ? err.message : String(err?.stack ?? err);
    process.stderr.write(`spend-sentinel: ${message}\n${USAGE}\n`);
    process.exitCode = 1;
  },
);
