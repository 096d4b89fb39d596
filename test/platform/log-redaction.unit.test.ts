import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/log.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { logger: createLogger('info', {}, stream), lines };
}

describe('log redaction', () => {
  it('never writes a token, key or password, at the top level or nested', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        access_token: 'AT-secret-1',
        refresh_token: 'RT-secret-2',
        apiKey: 'AK-secret-3',
        password: 'PW-secret-4',
        req: { headers: { authorization: 'Bearer SK-secret-5', cookie: 'c=SESSION-6' } },
        credentials: { type: 'OAUTH2', access_token: 'AT-secret-7' },
        nested: { client_secret: 'CS-secret-8', deeper: { privateKey: 'PK-secret-9' } },
        state: 'STATE-secret-10',
      },
      'something happened',
    );
    const out = lines.join('');
    for (const secret of [
      'AT-secret-1',
      'RT-secret-2',
      'AK-secret-3',
      'PW-secret-4',
      'SK-secret-5',
      'SESSION-6',
      'AT-secret-7',
      'CS-secret-8',
      'PK-secret-9',
      'STATE-secret-10',
    ]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('[redacted]');
    expect(out).toContain('something happened');
  });

  it('keeps error codes and names readable', () => {
    const { logger, lines } = capture();
    logger.warn({ code: 'provider_unavailable', namespace: 'team-a', connection: 'github-x' }, 'refresh failed');
    expect(lines.join('')).toContain('provider_unavailable');
  });
});
