// Self-test of helpers/redis.mjs (the fleet suites' Redis and proxy), without the addon: a broken
// harness fails here, not as a mysterious fleet failure. Needs redis-server on PATH.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { RedisReplyError, encodeCommand, parseReply, rawCommands, startProxy, startRedis } from './helpers/redis.mjs';
import { deferred, now, quietPeriod, withTimeout } from './helpers/wait.mjs';

const cleanups = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()();
});
async function redis(opts) {
  const r = await startRedis(opts);
  cleanups.push(() => r.stop());
  return r;
}
async function proxy(port) {
  const p = await startProxy(port);
  cleanups.push(() => p.close());
  return p;
}

/** A long-lived raw connection: send commands, wait for N parsed replies, see it close. */
function openClient(port) {
  const socket = connect({ host: '127.0.0.1', port });
  cleanups.push(() => socket.destroy());
  let buf = Buffer.alloc(0);
  const replies = [];
  let onReply = () => {};
  const closed = deferred();
  socket.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (let p = parseReply(buf); p; p = parseReply(buf)) {
      replies.push(p.value);
      buf = buf.subarray(p.end);
      onReply();
    }
  });
  socket.on('error', () => {});
  socket.on('close', () => closed.resolve());
  return {
    replies,
    closed: closed.promise,
    send: (...cmd) => socket.write(encodeCommand(cmd)),
    until(n, ms = 2000) {
      if (replies.length >= n) return Promise.resolve(replies);
      const d = deferred();
      onReply = () => replies.length >= n && d.resolve(replies);
      return withTimeout(d.promise, ms, `${n} replies (have ${replies.length})`);
    },
  };
}

describe('RESP codec', () => {
  test('encodes commands as arrays of bulk strings', () => {
    assert.equal(encodeCommand(['SET', 'k', 'vé']).toString(), '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nvé\r\n');
  });

  test('parses every reply type, and reports incomplete input as null', () => {
    const buf = Buffer.from('+OK\r\n-ERR bad\r\n:42\r\n$3\r\nabc\r\n$-1\r\n*2\r\n:1\r\n$1\r\nx\r\n*-1\r\n');
    const values = [];
    for (let at = 0, p; (p = parseReply(buf, at)); at = p.end) values.push(p.value);
    assert.equal(values.length, 7);
    assert.equal(values[0], 'OK');
    assert.ok(values[1] instanceof RedisReplyError && values[1].reply === 'ERR bad');
    assert.deepEqual(values.slice(2), [42, 'abc', null, [1, 'x'], null]);
    assert.equal(parseReply(Buffer.from('$3\r\nab')), null);
    assert.equal(parseReply(Buffer.from('*2\r\n:1\r\n')), null);
  });
});

describe('startRedis', () => {
  test('answers commands on 127.0.0.1; stop() frees the port', async () => {
    const t0 = now();
    const r = await redis();
    console.log(`# redis-server up in ${(now() - t0).toFixed(0)} ms`);
    assert.equal(r.url, `redis://127.0.0.1:${r.port}`);
    assert.ok(Number.isInteger(r.pid));
    assert.equal(await r.command('SET', 'k', 'v'), 'OK');
    assert.equal(await r.command('GET', 'k'), 'v');
    assert.equal(await r.command('CONFIG', 'GET', 'save').then((x) => x[1]), '');
    assert.equal(await r.command('CONFIG', 'GET', 'appendonly').then((x) => x[1]), 'no');
    await assert.rejects(r.command('NOSUCHCOMMAND'), RedisReplyError);
    await r.stop();
    await assert.rejects(rawCommands(r.port, [['PING']], { timeoutMs: 10000 }), /ECONNREFUSED/);
    await r.stop(); // idempotent
  });

  test('a port another redis-server already answers on is a lost race, not a start (the answer must come from the new process)', async () => {
    const other = await redis();
    // The same port, as a race between two tests' free-port picks would give it: the new
    // process cannot bind, and the server answering there is the other one.
    await assert.rejects(redis({ port: other.port }), /address already in use/i);
    assert.equal(await other.command('PING'), 'PONG', 'the other server is untouched');
  });

  test('pause() holds every reply until resume(); paused() resolves once the server is stopped', async () => {
    const r = await redis();
    r.pause();
    await r.paused();
    await assert.rejects(rawCommands(r.port, [['PING']], { timeoutMs: 300 }), /timed out/);
    const late = rawCommands(r.port, [['PING']], { timeoutMs: 3000 });
    r.resume();
    assert.deepEqual(await late, ['PONG']);
  });

  test('a paused server still stops', async () => {
    const r = await redis();
    r.pause();
    await withTimeout(r.stop(), 3000, 'stop() of a paused redis');
    await assert.rejects(rawCommands(r.port, [['PING']], { timeoutMs: 10000 }), /ECONNREFUSED/);
  });

  test('kill9() + restart(): same port, new pid, empty state', async () => {
    const r = await redis();
    await r.command('SET', 'k', 'v');
    const before = r.pid;
    await r.kill9();
    await assert.rejects(rawCommands(r.port, [['PING']], { timeoutMs: 10000 }), /ECONNREFUSED/);
    await r.restart();
    assert.notEqual(r.pid, before);
    assert.equal(await r.command('GET', 'k'), null);
    await r.command('SET', 'k', 'v2');
    await r.restart(); // also from a running server
    assert.equal(await r.command('DBSIZE'), 0);
  });

  test('clientPause(ms) holds replies until ms after the pause began; WRITE lets reads and clientUnpause() through; flushAll() empties', async () => {
    const r = await redis();
    await r.command('SET', 'k', 'v');
    // t0 before the pause is asked: it begins later, so no reply of a held command comes before
    // t0 + 300 ms, however slow the machine (2 ms: Redis's and Node's clocks tick differently).
    const t0 = now();
    await r.clientPause(300);
    assert.equal(await r.command('GET', 'k'), 'v');
    assert.ok(now() - t0 >= 298, `GET answered ${(now() - t0).toFixed(0)} ms after CLIENT PAUSE 300 was asked`);

    await r.clientPause(600000, 'WRITE');
    const write = rawCommands(r.port, [['SET', 'k', 'w']], { timeoutMs: 30000 });
    assert.equal(await r.command('GET', 'k'), 'v', 'a read passes a WRITE pause');
    assert.equal(await r.clientUnpause(), 'OK');
    assert.deepEqual(await write, ['OK'], 'the held write runs once unpaused');
    assert.equal(await r.command('GET', 'k'), 'w');
    await r.flushAll();
    assert.equal(await r.command('DBSIZE'), 0);
  });

  test('user + password: an ACL user; unauthenticated commands are refused', async () => {
    const r = await redis({ user: 'fleet', password: 'harness-pw' });
    assert.equal(await r.command('SET', 'k', 'v'), 'OK');
    const [reply] = await rawCommands(r.port, [['GET', 'k']]);
    assert.ok(reply instanceof RedisReplyError && /NOAUTH/.test(reply.reply), String(reply));
  });

  test('a missing redis-server is a clear error naming the Debian package', async () => {
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await assert.rejects(startRedis(), /redis-server.*Debian package `redis-server`/);
    } finally {
      process.env.PATH = saved;
    }
  });
});

describe('startProxy', () => {
  test('pass forwards; url() keeps user, password and db', async () => {
    const r = await redis();
    const p = await proxy(r.port);
    assert.deepEqual(await rawCommands(p.port, [['SET', 'k', 'v'], ['GET', 'k']]), ['OK', 'v']);
    assert.equal(p.url('redis://u:pw@127.0.0.1:1/2'), `redis://u:pw@127.0.0.1:${p.port}/2`);
    assert.equal(p.url(r.url), `redis://127.0.0.1:${p.port}`);
  });

  test('blackhole: existing and new connections get nothing; back to pass, new connections work', async () => {
    const r = await redis();
    const p = await proxy(r.port);
    const c = openClient(p.port);
    c.send('PING');
    await c.until(1);
    p.setMode('blackhole');
    const received = p.received;
    c.send('PING');
    assert.equal(await p.nextReceived(), received + 1, 'the proxy saw the request it drops');
    await assert.rejects(rawCommands(p.port, [['PING']], { timeoutMs: 300 }), /timed out/);
    await quietPeriod(200); // absence: nothing reaches the existing connection either
    assert.equal(c.replies.length, 1, 'an existing connection got an answer while blackholed');
    p.setMode('pass');
    assert.deepEqual(await rawCommands(p.port, [['PING']]), ['PONG']);
    await withTimeout(c.closed, 2000, 'the blackholed connection to be closed on pass');
  });

  test('reset destroys existing connections and every new one', async () => {
    const r = await redis();
    const p = await proxy(r.port);
    const c = openClient(p.port);
    c.send('PING');
    await c.until(1);
    p.setMode('reset');
    await withTimeout(c.closed, 2000, 'the existing connection to be reset');
    await assert.rejects(rawCommands(p.port, [['PING']], { timeoutMs: 10000 }), /ECONNRESET|closed after 0/);
    p.setMode('pass');
    assert.deepEqual(await rawCommands(p.port, [['PING']]), ['PONG']);
    assert.throws(() => p.setMode('drop'), /one of pass, blackhole, reset/);
  });
});
