#!/usr/bin/env node
'use strict';
// `spend-sentinel <command>`. Exit codes follow Docker HEALTHCHECK: 0 healthy, 1 anything else
// (a usage error included: Docker reserves 2).

const { parseArgs } = require('node:util');
const { probe } = require('./probe-client');

const USAGE = [
  'usage: spend-sentinel probe <url> [--timeout-ms N]   (exit 0 on a 2xx answer, 1 otherwise)',
  '       spend-sentinel window --budget B --rate R [--nodes N | --share S] [--max-stale SECONDS]',
  '       spend-sentinel build-from-source                 (compile the addon with your Rust, for platforms without a prebuilt binary)',
  '       spend-sentinel help | --help | -h                (this text, on stdout; exit 0)',
].join('\n');

/** Asking for help is not a usage error: the usage goes to stdout and the exit code is 0. */
const HELP = new Set(['help', '--help', '-h']);

/** `window` flags → the `budget` options of `new Sentinel`, validated by the addon itself. */
const WINDOW_FLAGS = {
  budget: 'unverifiedUnits',
  rate: 'maxUnitsPerSecond',
  nodes: 'nodes',
  share: 'share',
  'max-stale': 'maxStaleSeconds',
};

const COMMANDS = {
  window(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { ...Object.fromEntries(Object.keys(WINDOW_FLAGS).map((flag) => [flag, { type: 'string' }])), ...HELP_FLAG },
    });
    if (values.help) return help();
    if (positionals.length > 0) throw new UsageError(`window: unexpected argument "${positionals[0]}"`);
    const budget = {};
    for (const [flag, option] of Object.entries(WINDOW_FLAGS)) {
      if (values[flag] !== undefined) budget[option] = values[flag].trim() === '' ? Number.NaN : Number(values[flag]);
    }
    const { computeBudget } = require('./main');
    let answer;
    try {
      answer = computeBudget(budget);
    } catch (err) {
      if (err.code !== 'ERR_SPEND_SENTINEL_CONFIG') throw err;
      throw new UsageError(`window: ${withTypedValue(withFlagNames(err.message), values)}`);
    }
    process.stdout.write(explainWindow(budget, answer));
    return 0;
  },

  'build-from-source'(args) {
    const { values, positionals } = parseArgs({ args, options: HELP_FLAG, allowPositionals: true });
    if (values.help) return help();
    if (positionals.length > 0) throw new UsageError(`build-from-source: unexpected argument "${positionals[0]}"`);
    return require('./build-from-source').buildFromSource();
  },

  async probe(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { 'timeout-ms': { type: 'string', default: '3000' }, ...HELP_FLAG },
      allowPositionals: true,
    });
    if (values.help) return help();
    if (positionals.length !== 1) throw new UsageError('probe: expects exactly one <url>');
    const url = parseUrl(positionals[0]);
    const timeoutMs = Number(values['timeout-ms']);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new UsageError(`probe: --timeout-ms: must be a number of milliseconds > 0 (got ${JSON.stringify(values['timeout-ms'])})`);
    }
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

const HELP_FLAG = { help: { type: 'boolean', short: 'h' } };

function help() {
  process.stdout.write(`${USAGE}\n`);
  return 0;
}

/**
 * The addon reports the number it was given (`(got NaN)` for `--budget abc`); a CLI user typed
 * text, so the message ends with that text instead: `--budget: … (got "abc")`.
 */
function withTypedValue(message, values) {
  const flag = Object.keys(WINDOW_FLAGS).find((f) => message.startsWith(`--${f}:`));
  if (flag === undefined || values[flag] === undefined) return message;
  const typed = `(got ${JSON.stringify(values[flag])})`;
  return /\(got [^()]*\)/.test(message) ? message.replace(/\(got [^()]*\)/, () => typed) : `${message} ${typed}`;
}

/** `budget.maxStaleSeconds: …` → `--max-stale (budget.maxStaleSeconds): …`, for CLI users. */
function withFlagNames(message) {
  let text = message;
  for (const [flag, option] of Object.entries(WINDOW_FLAGS)) {
    text = text.replaceAll(`budget.${option}`, `--${flag}`);
  }
  return text;
}

function explainWindow(budget, { nodeBudgetUnits, staleWindowSeconds, ceilingSeconds }) {
  const b = budget.unverifiedUnits;
  const r = budget.maxUnitsPerSecond;
  const share = budget.share !== undefined ? String(budget.share) : `1/${budget.nodes ?? 1}`;
  const lines = [
    `node budget  = b × share = ${b} × ${share} = ${round(nodeBudgetUnits)} units`,
    `stale window = node budget / r = ${round(nodeBudgetUnits)} / ${r} = ${round(ceilingSeconds)} s`,
  ];
  if (budget.maxStaleSeconds !== undefined) {
    lines.push(`             lowered to --max-stale: ${round(staleWindowSeconds)} s`);
  }
  lines.push(
    `At ${r} units/s this node spends its ${round(nodeBudgetUnits)} unverified units in ${round(ceilingSeconds)} s:`,
    `evidence older than ${round(staleWindowSeconds)} s makes it not_ready.`,
  );
  return `${lines.join('\n')}\n`;
}

const round = (n) => String(Math.round(n * 1e6) / 1e6);

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
  if (HELP.has(command)) return help();
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
