/**
 * Made-up keys of the JWT-minting providers in their documented formats, for the tests of the JWT mode:
 * a Ghost Admin API key ("<24 hex id>:<64 hex secret>") and an App Store Connect key (a key ID, an issuer
 * ID and the P-256 private key of its .p8 file, PKCS #8 PEM; the pair is made at load).
 */
import { generateKeyPairSync } from 'node:crypto';

export const GHOST_ID = '6748592f4b9b7700010f6564';
export const GHOST_SECRET = 'b1b5b9c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1';
export const ASC_KEY_ID = '2X9R4HXF34';
export const ASC_ISSUER = '57246542-96fe-1a63-e053-0824d011072a';
export const ascKeyPair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
export const ASC_P8 = ascKeyPair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
