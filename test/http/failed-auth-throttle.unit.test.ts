import type { IncomingMessage } from 'node:http';
import { LatchkeyError } from '../../src/domain/errors.js';
import { createRegistry } from '../../src/platform/metrics.js';
import { FailedAuthThrottle, sourceAddress, throttled } from '../../src/http/failed-auth-throttle.js';

const from = (remoteAddress: string) => ({ socket: { remoteAddress } }) as unknown as IncomingMessage;
const wrongKey = () => {
  throw new LatchkeyError('unauthenticated', 'unknown_secret_key', 'The secret key does not belong to any environment');
};

describe('FailedAuthThrottle', () => {
  it('checks the key first: a right key always passes, a wrong one is 429 once its address failed `burst` times', () => {
    let now = 0;
    const metrics = createRegistry();
    const throttle = new FailedAuthThrottle(metrics, () => now, { burst: 3, perMinute: 6, maxAddresses: 100 });
    const codes: string[] = [];
    let checks = 0;
    const attempt = (address: string, check: () => string = wrongKey) => {
      try {
        return throttled(throttle, 'rest', from(address), () => {
          checks++;
          return check();
        });
      } catch (err) {
        codes.push((err as LatchkeyError).code);
        return (err as LatchkeyError).retryAfterMs;
      }
    };
    for (let i = 0; i < 5; i++) attempt('10.0.0.1');
    expect(codes).toEqual([
      'unknown_secret_key',
      'unknown_secret_key',
      'unknown_secret_key',
      'too_many_failed_authentications',
      'too_many_failed_authentications',
    ]);
    expect(checks).toBe(5); // every key was checked
    expect(attempt('10.0.0.1', () => 'ok')).toBe('ok'); // a right key from the over-budget address is served
    expect(attempt('10.0.0.1')).toBe(10_000); // and does not lift the throttle: a wrong one still waits
    expect(attempt('10.0.0.2', () => 'ok')).toBe('ok');
    now += 10_000; // one failure regained
    codes.length = 0;
    attempt('10.0.0.1');
    attempt('10.0.0.1');
    expect(codes).toEqual(['unknown_secret_key', 'too_many_failed_authentications']);
    // A missing header is not a guess: not counted.
    const missing = () => {
      throw new LatchkeyError('unauthenticated', 'missing_authorization', 'Authorization header is required');
    };
    codes.length = 0;
    for (let i = 0; i < 10; i++) attempt('10.0.0.3', missing);
    expect(new Set(codes)).toEqual(new Set(['missing_authorization']));
    expect(throttle.addresses).toBe(1);
  });

  it('counts rejected and throttled attempts by surface', async () => {
    const metrics = createRegistry();
    const throttle = new FailedAuthThrottle(metrics, () => 0, { burst: 2, perMinute: 1, maxAddresses: 100 });
    for (let i = 0; i < 5; i++) {
      try {
        throttled(throttle, 'dashboard', from('10.0.0.1'), wrongKey);
      } catch {
        /* counted */
      }
    }
    const values = (await metrics.getSingleMetric('latchkey_auth_failures_total')!.get()).values;
    const count = (result: string) => values.find((v) => v.labels.surface === 'dashboard' && v.labels.result === result)?.value;
    expect([count('rejected'), count('throttled')]).toEqual([2, 3]);
  });

  it('keeps at most maxAddresses addresses', () => {
    const throttle = new FailedAuthThrottle(createRegistry(), () => 0, { burst: 1, perMinute: 1, maxAddresses: 50 });
    for (let i = 0; i < 1000; i++) throttle.failed('rest', `10.0.${i >> 8}.${i & 255}`);
    expect(throttle.addresses).toBeLessThanOrEqual(50);
  });
});

describe('sourceAddress', () => {
  it('is the socket peer, IPv4-mapped addresses as IPv4, IPv6 by its /64', () => {
    expect(sourceAddress(from('127.0.0.1'))).toBe('127.0.0.1');
    expect(sourceAddress(from('::ffff:10.1.2.3'))).toBe('10.1.2.3');
    expect(sourceAddress(from('2001:db8:0:1:aaaa::1'))).toBe('2001:db8:0:1::/64');
    expect(sourceAddress(from('2001:db8::1'))).toBe('2001:db8:0:0::/64');
    expect(sourceAddress(from('2001:DB8:0:1:ffff:1:2:3'))).toBe('2001:db8:0:1::/64');
    expect(sourceAddress(from('::1'))).toBe('0:0:0:0::/64');
  });
});
