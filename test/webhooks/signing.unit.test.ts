/** Standard Webhooks signatures and the retry schedule (no cluster: pure functions). */
import { parseRetryAfter } from '../../src/domain/retry.js';
import { retryDelaySeconds } from '../../src/webhooks/backoff.js';
import { signPayload, verifyWebhook } from '../../src/webhooks/signing.js';

describe('signing and schedule', () => {
  it('matches the Standard Webhooks reference signature and verifies', () => {
    const key = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    expect(signPayload(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    expect(verifyWebhook(key, headers, body, 1614265330)).toBe(true);
    expect(verifyWebhook(key, headers, body.replace('2432', '2433'), 1614265330)).toBe(false);
    expect(verifyWebhook(key, headers, body, 1614265330 + 3600)).toBe(false); // replayed later
  });

  it('backs off exponentially with jitter, capped, and honours Retry-After', () => {
    const cfg = { webhookBackoffBaseSeconds: 2, webhookBackoffMaxSeconds: 60 };
    expect(retryDelaySeconds(1, cfg, () => 0)).toBe(1);
    expect(retryDelaySeconds(1, cfg, () => 1)).toBe(2);
    expect(retryDelaySeconds(3, cfg, () => 1)).toBe(8);
    expect(retryDelaySeconds(3, cfg, () => 0)).toBe(4);
    expect(retryDelaySeconds(10, cfg, () => 1)).toBe(60);
    expect(retryDelaySeconds(1, cfg, () => 0, 30)).toBe(30);
    expect(retryDelaySeconds(1, cfg, () => 0, 3600)).toBe(60);
    expect(parseRetryAfter('7', 0)).toBe(7000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 0)).toBe(10_000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });
});
