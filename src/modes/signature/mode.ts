/**
 * SIGNATURE: a username and secret from which a per-request value is computed (WSSE), never stored:
 * fetch answers a fresh one, and the proxy sends a fresh one on every attempt — wherever the
 * Provider's templates use `${accessToken}` (Emarsys: `x-wsse: ${accessToken}`), otherwise in the
 * protocol's own header (`spec.signature.header`, default `x-wsse`).
 */
import { z } from 'zod';
import { DEFAULT_SIGNATURE_HEADER, withFreshSignature } from './request-signature.js';
import type { AuthModeModule } from '../auth-mode.js';
import { flatFields } from '../shared/flat-fields.js';
import { headerValue, noAuthorization, templatesUse } from '../shared/injection.js';
import { signatureOptions } from './options.js';
import { shownTimestamp } from '../shared/credential-schemas.js';

export const signature: AuthModeModule = {
  mode: 'SIGNATURE',
  credentialSchemas: {
    import: z.strictObject({
      type: z.literal('SIGNATURE'),
      username: z.string().min(1).max(1024),
      password: z.string().min(1).max(4096).describe('The secret the signature is computed from'),
    }),
    shown: z.object({
      type: z.literal('SIGNATURE'),
      username: z.string(),
      password: z.string(),
      token: z
        .string()
        .optional()
        .describe('GET /connections/{id}: a value computed for this answer (WSSE: the X-WSSE header value), accepted until expires_at'),
      expires_at: shownTimestamp.optional(),
    }),
  },
  fromImport: (_deps, { given }) => Promise.resolve({ credentials: { ...given } }),
  fromFlatImport(_deps, input) {
    const body = flatFields(input, ['username', 'password'], ['username', 'password']);
    return Promise.resolve({ type: 'SIGNATURE', username: body.username!, password: body.password! });
  },
  connect: {
    flow: 'form',
    fields: () => [
      { name: 'username', secret: false, required: true },
      { name: 'password', secret: true, required: true },
    ],
    credentials: (_deps, { values }) =>
      Promise.resolve({ credentials: { type: 'SIGNATURE', username: values.username!, password: values.password! } }),
  },
  proxy: {
    accessTokenField: 'token',
    refreshesOnUse: false,
    signsFormBody: false,
    authorization: noAuthorization,
    ownHeader(spec, credentials) {
      if (templatesUse(spec, '${accessToken}')) return undefined;
      return [(spec.signature?.header ?? DEFAULT_SIGNATURE_HEADER).toLowerCase(), headerValue(credentials.token, 'signature')];
    },
    perUse: (spec, credentials, now) => withFreshSignature(spec.signature, credentials, now),
  },
  providerProblems: (spec) => (spec.signature?.protocol === 'WSSE' ? [] : ['SIGNATURE providers need spec.signature.protocol (WSSE)']),
  integration: { clientBeforeConnect: false, accepts: [] },
  options: signatureOptions,
};
