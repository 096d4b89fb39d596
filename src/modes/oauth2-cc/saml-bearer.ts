/**
 * OAUTH2_CC's SAML 2.0 bearer assertion grant (RFC 7522 §2.1), as a Provider's `modeOptions.samlBearer`
 * declares it: at each token request (the connection's first and every renewal; the grant issues no refresh
 * token) Latchkey writes a new assertion naming the connection's user, signs it with the Integration's
 * private key (whose X.509 certificate the end user's administrator registered with the provider), and sends
 * it with the provider's parameters. The assertion and the key are never logged or stored.
 */
import { z } from 'zod';
import { fillCredentialTemplate } from '../../catalog/credential-templates.js';
import { fillProviderUrl } from '../../catalog/connection-config.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import type { ModeOptions } from '../auth-mode.js';
import { signedSamlAssertion } from './saml-assertion.js';

export const SAML2_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:saml2-bearer';

/** Values may use `${connectionConfig.X}`; `attributes` and `tokenParams` also `${clientId}` (the connection's client ID). */
const SamlBearerOptions = z.strictObject({
  /** The provider's pages these facts come from. */
  docs: z.array(z.string().url()).optional(),
  issuer: z.string().min(1),
  audience: z.string().min(1),
  /** The token endpoint as the assertion names it (a URL on the provider's hosts). */
  recipient: z.string().min(1),
  /** The user the assertion names (the connection's, by a configuration key). */
  nameId: z.string().min(1),
  nameIdFormat: z.string().min(1).default('urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified'),
  attributes: z.record(z.string(), z.string()).default({}),
  /** How long an assertion is accepted: it is used once, at once. */
  lifetimeSeconds: z.number().int().min(30).max(3600).default(300),
  /** Token request parameters beside grant_type, assertion and client_id. */
  tokenParams: z.record(z.string(), z.string()).default({}),
  /** How the assertion is encoded in the `assertion` parameter: RFC 7522's base64url, or base64 where the provider's docs say so. */
  encoding: z.enum(['base64url', 'base64']).default('base64url'),
});
export type SamlBearerOptions = z.infer<typeof SamlBearerOptions>;

const OAuth2CcModeOptions = z.strictObject({ samlBearer: SamlBearerOptions.optional() });

export const oauth2CcOptions: ModeOptions = {
  field: 'modeOptions',
  schema: OAuth2CcModeOptions,
  shownAs: 'mode_options',
  view: (block) => block,
  viewSchema: z.record(z.string(), z.unknown()).optional(),
};

/** The Provider's SAML bearer grant, or undefined when its token requests are plain client credentials. */
export function samlBearerOf(spec: ProviderSpec): SamlBearerOptions | undefined {
  const block = spec.modeOptions?.samlBearer;
  if (block === undefined) return undefined;
  const parsed = SamlBearerOptions.safeParse(block);
  if (!parsed.success) throw new LatchkeyError('internal', 'provider_misconfigured', "The provider's modeOptions.samlBearer is not valid.");
  return parsed.data;
}

/** The grant's parameters for one token request, with a new signed assertion. */
export function samlBearerGrant(
  spec: ProviderSpec,
  options: SamlBearerOptions,
  input: { clientId: string; privateKey: string | undefined; connectionConfig: Record<string, unknown>; nowMs: number },
): { type: string; params: Record<string, string> } {
  if (!input.privateKey)
    throw new LatchkeyError(
      'internal',
      'integration_not_configured',
      "This provider takes a SAML assertion signed by the Integration (RFC 7522): the Integration's Secret needs privateKey.",
    );
  const fill = (template: string, where: string) =>
    fillCredentialTemplate(
      template,
      `SAML assertion's ${where}`,
      {
        apiKey: undefined,
        username: undefined,
        password: undefined,
        accessToken: undefined,
        sessionToken: undefined,
        clientId: input.clientId,
      },
      input.connectionConfig,
    );
  const xml = signedSamlAssertion({
    issuer: fill(options.issuer, 'issuer'),
    audience: fill(options.audience, 'audience'),
    recipient: fillProviderUrl(spec, options.recipient, input.connectionConfig),
    nameId: fill(options.nameId, 'NameID'),
    nameIdFormat: options.nameIdFormat,
    attributes: Object.fromEntries(Object.entries(options.attributes).map(([k, v]) => [k, fill(v, `attribute ${k}`)])),
    lifetimeSeconds: options.lifetimeSeconds,
    nowMs: input.nowMs,
    privateKey: input.privateKey,
  });
  const params = Object.fromEntries(Object.entries(options.tokenParams).map(([k, v]) => [k, fill(v, `token parameter ${k}`)]));
  return { type: SAML2_BEARER_GRANT, params: { ...params, assertion: Buffer.from(xml).toString(options.encoding) } };
}
