#!/usr/bin/env node
'use strict';
// `spend-sentinel <command>`. Exit codes follow Docker HEALTHCHECK: 0 healthy, 1 anything else
// (a usage error included: Docker reserves 2).

const { parseArgs } = require('node:util');
const { packageVersion } = require('./native-error');
const { probe } = require('./probe-client');
const { windowOptions, runWindow } = require('./cli-window');

const USAGE = [
  'usage: spend-sentinel probe <url> [--timeout-ms N]   (exit 0 on a 2xx answer, 1 otherwise)',
  '       spend-sentinel window --budget B --rate R [--nodes N | --share S] [--max-stale SECONDS]',
  '       spend-sentinel window --budget B --rate R --max-nodes N [--live-nodes L] [--reserve F]',
  '                             [--lease-seconds S] [--max-split-seconds S] [--max-stale SECONDS]',
  '                             (a fleet budget, L of N nodes alive: default N)',
  '       spend-sentinel build-from-source                 (compile the addon with your Rust, for platforms without a prebuilt binary)',
  '       spend-sentinel help | --help | -h                (this text, on stdout; exit 0)',
  '       spend-sentinel --version                         (the package version, on stdout; exit 0)',
].join('\n');

/** Asking for help is not a usage error: the usage goes to stdout and the exit code is 0. */
const HELP = new Set(['help', '--help', '-h']);

/** What every error ends with: one line, instead of the whole usage. */
const HINT = 'run "spend-sentinel --help" for usage';

const COMMANDS = {
  window(args) {
    const { values } = parseArgs({ args, options: { ...windowOptions(), ...HELP_FLAG } });
    if (values.help) return help();
    process.stdout.write(runWindow(values, (message) => new UsageError(message)));
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
  if (command === '--version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const run = Object.hasOwn(COMMANDS, command ?? '') ? COMMANDS[command] : undefined;
  if (!run) throw new UsageError(command ? `unknown command "${command}"` : 'missing command');
  try {
    return await run(rest);
  } catch (err) {
    throw err.code?.startsWith('ERR_PARSE_ARGS') ? new UsageError(`${command}: ${parseArgsMessage(err)}`) : err;
  }
}

/** node:util parseArgs's errors, in the CLI's words (its own are long and capitalized). */
function parseArgsMessage(err) {
  const flag = /'(-[^' ]+)/.exec(err.message)?.[1];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown flag ${flag}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return `${flag}: needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument "${/'([^']*)'/.exec(err.message)?.[1]}"`;
    default:
      return err.message;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    // A usage error is one line and a hint; anything else is a defect, shown with its stack.
    const message = err instanceof UsageError ? `${err.message.replace(/\s*\n\s*/g, ' ')}\n${HINT}` : String(err?.stack ?? err);
    process.stderr.write(`spend-sentinel: ${message}\n`);
    process.exitCode = 1;
  },
);
