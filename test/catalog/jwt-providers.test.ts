/**
 * Every shipped JWT provider can mint a token: its `modeOptions` pass the minter's checks, a key of
 * its algorithm signs, every `${connectionConfig.X}` in the header and claims is filled from the
 * connection configuration it declares, and the lifetime is what the manifest says. The signature is
 * checked with node:crypto against the public half of a freshly generated key.
 */
import { createHmac, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { mintJwt } from '../../src/modes/shared/jwt-minting.js';
import { configFieldNames } from '../../src/catalog/connection-config.js';
import { readCatalog } from '../support/catalog-files.js';

const jwtProviders = readCatalog().filter((m) => m.spec.authMode === 'JWT');

interface TestKey {
  apiKey: string;
  check: (input: Buffer, signature: Buffer) => boolean;
}

/** A signing key for the algorithm, and a check of a signature made with it. */
function keyFor(algorithm: string, secretEncoding: string | undefined): TestKey {
  if (algorithm === 'HS256') {
    const apiKey = 'b1b5b9c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1';
    const secret =
      secretEncoding === 'hex'
        ? Buffer.from(apiKey, 'hex')
        : secretEncoding === 'base64'
          ? Buffer.from(apiKey, 'base64')
          : Buffer.from(apiKey);
    return { apiKey, check: (input, signature) => signature.equals(createHmac('sha256', secret).update(input).digest()) };
  }
  const pair =
    algorithm === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pub: KeyObject = pair.publicKey;
  return {
    apiKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    check: (input, signature) =>
      algorithm === 'ES256'
        ? verify('sha256', input, { key: pub, dsaEncoding: 'ieee-p1363' }, signature)
        : verify('sha256', input, pub, signature),
  };
}

describe('shipped JWT providers', () => {
  it('includes more than the two original JWT providers', () => {
    expect(jwtProviders.length).toBeGreaterThan(2);
  });

  it.each(jwtProviders.map((m) => [m.metadata.name, m] as const))('%s mints a verifiable token from its own modeOptions', (_name, m) => {
    const options = m.spec.modeOptions as { algorithm: string; secretEncoding?: string; lifetimeSeconds?: number };
    const key = keyFor(options.algorithm, options.secretEncoding);
    const config = Object.fromEntries(configFieldNames(m.spec).map((k) => [k, `value-of-${k}`]));
    const now = Date.UTC(2030, 0, 1);
    const { token, expiresAt } = mintJwt({ modeOptions: m.spec.modeOptions, apiKey: key.apiKey, connectionConfig: config, now });

    const [h, p, s] = token.split('.');
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString()) as Record<string, unknown>;
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
    const input = Buffer.from(`${h}.${p}`);
    const signature = Buffer.from(s!, 'base64url');
    expect(key.check(input, signature)).toBe(true);

    expect(header.alg).toBe(options.algorithm);
    const lifetime = options.lifetimeSeconds ?? 300;
    expect(claims.exp).toBe(now / 1000 + lifetime);
    expect(expiresAt).toBe(new Date(now + lifetime * 1000).toISOString());
    // No placeholder is left unfilled in what the provider will see.
    expect(JSON.stringify({ header, claims })).not.toContain('${');
  });
});
