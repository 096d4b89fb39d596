/**
 * The operation log's parts that need no cluster: redaction of messages (with real secrets: a signed
 * JWT, random tokens, a client secret, in the shapes providers answer with), retention by count and
 * age, paging, and the recorder's queue (never throws, bounded, same ID on stdout and in storage).
 * The sink here is a hand-written in-memory one (the real one, src/k8s/oplog-store.ts, is tested
 * against the API server in logs-api.test.ts).
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/log.js';
import { newEntryId, prefixOfId, type OplogEntry } from '../../src/oplog/entry.js';
import { OperationLog, type OplogSink, type OplogTarget } from '../../src/oplog/operation-log.js';
import { page } from '../../src/oplog/query.js';
import { redactMessage } from '../../src/oplog/redact.js';
import { retain } from '../../src/oplog/retention.js';

const b64u = (b: Buffer | string) => Buffer.from(b).toString('base64url');

function realJwt(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const head = b64u(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const body = b64u(JSON.stringify({ sub: 'user-1', exp: Math.floor(Date.now() / 1000) + 3600 }));
  return `${head}.${body}.${b64u(sign('sha256', Buffer.from(`${head}.${body}`), privateKey))}`;
}

describe('redactMessage', () => {
  const accessToken = randomBytes(24).toString('base64url');
  const refreshToken = randomBytes(32).toString('hex');
  const clientSecret = randomBytes(16).toString('hex');
  const code = randomBytes(20).toString('base64url');
  const jwt = realJwt();

  const cases: Array<[string, string[]]> = [
    [
      `token endpoint answered {"access_token":"${accessToken}","refresh_token":"${refreshToken}","token_type":"Bearer"}`,
      [accessToken, refreshToken],
    ],
    [`callback https://app.test/oauth/callback?code=${code}&state=abc.def`, [code, 'abc.def']],
    [`sent grant_type=refresh_token&refresh_token=${refreshToken}&client_secret=${clientSecret}`, [refreshToken, clientSecret]],
    [`request header Authorization: Bearer ${accessToken}`, [accessToken]],
    [`id token ${jwt} was rejected`, [jwt]],
    [`upstream https://user:${clientSecret}@api.example.com/x failed`, [clientSecret]],
    [`apiKey: '${accessToken}' rejected`, [accessToken]],
  ];

  test.each(cases)('%#: no secret survives', (message, secrets) => {
    const out = redactMessage(message);
    for (const s of secrets) expect(out).not.toContain(s);
    expect(out).toContain('[redacted]');
  });

  test('known secret values are removed wherever they appear, and the useful part stays', () => {
    const out = redactMessage(`provider said: invalid_grant (the grant ${refreshToken} was revoked)`, [refreshToken]);
    expect(out).toBe('provider said: invalid_grant (the grant [redacted] was revoked)');
    // A provider's error code is kept: `code` is redacted only as a URL parameter.
    expect(redactMessage('error code: invalid_grant')).toBe('error code: invalid_grant');
    // Prose after a scheme's name is not a credential.
    for (const prose of [
      'Token refresh failed (reauthorization required): invalid_grant',
      'Basic authentication was refused',
      'OAuth callback received',
    ]) {
      expect(redactMessage(prose)).toBe(prose);
    }
  });

  test('long messages are cut', () => {
    expect(redactMessage('x'.repeat(5000)).length).toBeLessThanOrEqual(1024);
  });
});

function entry(i: number, time: number, extra: Partial<OplogEntry> = {}): OplogEntry {
  return {
    id: newEntryId('conn-abc-0123456789', time),
    time: new Date(time).toISOString(),
    namespace: 'ns',
    operation: 'refresh',
    outcome: i % 2 ? 'failure' : 'success',
    messages: [`entry ${i}`],
    ...extra,
  };
}

describe('retention', () => {
  const day = 86_400_000;
  const now = Date.parse('2026-06-01T00:00:00Z');
  const policy = { keepEntries: 5, keepMs: 7 * day, maxEntries: 20, maxBytes: 1e6 };

  test('keeps the newest N whatever their age, and everything younger than the age', () => {
    const old = Array.from({ length: 10 }, (_, i) => entry(i, now - 30 * day + i));
    const recent = Array.from({ length: 8 }, (_, i) => entry(100 + i, now - 2 * day + i));
    const kept = retain([...old, ...recent], now, policy);
    expect(kept.map((e) => e.messages[0])).toEqual(recent.map((e) => e.messages[0]));
    const onlyOld = retain(old, now, policy);
    expect(onlyOld.map((e) => e.messages[0])).toEqual(old.slice(5).map((e) => e.messages[0]));
  });

  test('max entries and bytes bound the object however young the entries are', () => {
    const many = Array.from({ length: 50 }, (_, i) => entry(i, now - i));
    expect(retain(many, now, policy)).toHaveLength(20);
    const small = retain(many, now, { ...policy, maxBytes: 2000 });
    expect(small.reduce((n, e) => n + JSON.stringify(e).length + 1, 0)).toBeLessThanOrEqual(2000);
    expect(small.length).toBeGreaterThan(0);
  });
});

describe('paging', () => {
  test('cursor pages cover every match once, newest first', () => {
    const all = Array.from({ length: 23 }, (_, i) => entry(i, 1_000_000 + (i % 7) * 1000));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const p = page(all, { limit: 5, outcome: 'failure', cursor });
      seen.push(...p.entries.map((e) => e.id));
      for (let i = 1; i < p.entries.length; i++) expect(p.entries[i - 1]!.time >= p.entries[i]!.time).toBe(true);
      cursor = p.nextCursor;
    } while (cursor);
    const failures = all.filter((e) => e.outcome === 'failure').map((e) => e.id);
    expect([...seen].sort()).toEqual([...failures].sort());
  });

  test('IDs carry their storage prefix', () => {
    expect(prefixOfId(newEntryId('github-u1-0123456789', Date.now()))).toBe('github-u1-0123456789');
    expect(prefixOfId('../etc')).toBeUndefined();
    expect(prefixOfId('UPPER.0000000000000000000000')).toBeUndefined();
  });
});

describe('OperationLog', () => {
  class MemorySink implements OplogSink {
    writes: Array<{ target: OplogTarget; entries: OplogEntry[] }> = [];
    fail = false;
    append(_ns: string, target: OplogTarget, entries: OplogEntry[]): Promise<void> {
      if (this.fail) return Promise.reject(new Error('apiserver down'));
      this.writes.push({ target, entries });
      return Promise.resolve();
    }
  }

  function logCapture() {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    return { lines, logger: createLogger('info', {}, stream) };
  }

  test('entries are redacted, logged with the same ID, and written in one batch per object', async () => {
    const sink = new MemorySink();
    const { lines, logger } = logCapture();
    let now = Date.parse('2026-01-01T00:00:00Z');
    const log = new OperationLog({ sink, clock: { now: () => now }, logger, flushIntervalMs: 10_000 });
    const secret = randomBytes(16).toString('hex');
    const a = log.record({
      namespace: 'ns',
      operation: 'refresh',
      outcome: 'failure',
      connection: { name: 'c1-0123456789', uid: 'u1' },
      messages: [`refresh_token=${secret} refused`],
    });
    now += 1000;
    const b = log.record({
      namespace: 'ns',
      operation: 'refresh',
      outcome: 'success',
      connection: { name: 'c1-0123456789' },
      messages: ['ok'],
    });
    const c = log.record({ namespace: 'ns', operation: 'authorization', outcome: 'failure', messages: ['denied'] });
    expect(prefixOfId(a)).toBe('c1-0123456789');
    expect(prefixOfId(c)).toBe('environment');
    await log.flush();
    expect(sink.writes).toHaveLength(2);
    const conn = sink.writes.find((w) => w.target.kind === 'connection')!;
    expect(conn.entries.map((e) => e.id)).toEqual([a, b]);
    expect(conn.target).toEqual({ kind: 'connection', name: 'c1-0123456789', uid: 'u1' });
    expect(JSON.stringify(sink.writes)).not.toContain(secret);
    expect(lines.join('')).not.toContain(secret);
    expect(lines.some((l) => l.includes(a))).toBe(true);
    await log.stop();
  });

  test('a failing store or a full queue never reaches the caller; drops are counted', async () => {
    const sink = new MemorySink();
    sink.fail = true;
    const drops: Array<[number, string]> = [];
    const log = new OperationLog({
      sink,
      clock: { now: () => Date.now() },
      logger: createLogger('silent'),
      maxQueue: 3,
      flushIntervalMs: 10_000,
      onDropped: (n, why) => drops.push([n, why]),
    });
    for (let i = 0; i < 5; i++)
      expect(typeof log.record({ namespace: 'ns', operation: 'proxy', outcome: 'failure', messages: [] })).toBe('string');
    await expect(log.flush()).resolves.toBeUndefined();
    expect(drops).toEqual([
      [1, 'queue_full'],
      [1, 'queue_full'],
      [3, 'write_failed'],
    ]);
    await log.stop();
  });

  test('whenStored resolves once the batch holding the entry is written, not before', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const stored: string[] = [];
    const sink: OplogSink = {
      async append(_ns, _target, entries) {
        await gate;
        stored.push(...entries.map((e) => e.id));
      },
    };
    const log = new OperationLog({ sink, clock: { now: () => Date.now() }, logger: createLogger('silent'), flushIntervalMs: 20 });
    const id = log.record({ namespace: 'ns', operation: 'authorization', outcome: 'failure', messages: ['denied'] });
    let done = false;
    const waited = log.whenStored(id).then(() => (done = true));
    // The flush timer fires and the write starts, but the sink has not finished it.
    await new Promise((r) => setTimeout(r, 60));
    expect(done).toBe(false);
    release();
    await waited;
    expect(stored).toContain(id);
    // Unknown or already stored: at once.
    await log.whenStored(id);
    await log.whenStored('nothing-waiting');
    await log.stop();
  });
});
