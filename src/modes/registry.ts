/**
 * Every auth mode's module, by mode: a `Record` over the mode type, so a mode without a module does
 * not compile. Callers look a mode up here instead of switching on it (test/modes/registry.unit.test.ts
 * fails on a switch outside src/modes).
 */
import type { RefreshStrategy } from '../auth/refresh/strategies.js';
import { AUTH_MODES, type AuthMode } from '../domain/auth-modes.js';
import type { z } from 'zod';
import type { ProviderSpec } from '../k8s/resources.js';
import type { StoredCredentials } from '../k8s/store.js';
import { apiKey } from './api-key/mode.js';
import { app } from './app/mode.js';
import { appStore } from './app-store/mode.js';
import type { AuthModeModule, CredentialsSchema } from './auth-mode.js';
import { basic } from './basic/mode.js';
import { bill } from './bill/mode.js';
import { custom } from './custom/mode.js';
import { installPlugin } from './install-plugin/mode.js';
import { jwt } from './jwt/mode.js';
import { mcpOAuth2 } from './mcp-oauth/mode.js';
import { none } from './none/mode.js';
import { oauth1 } from './oauth1/mode.js';
import { oauth2 } from './oauth2/mode.js';
import { oauth2ClientCredentials } from './oauth2-cc/mode.js';
import { signature } from './signature/mode.js';
import { tba } from './tba/mode.js';
import { twoStep } from './two-step/mode.js';

/**
 * In the order of the import body's credential types (Nango's): a 400 for an unknown `type` lists them
 * in it (zod's message), and the OpenAPI document's unions follow it.
 */
export const AUTH_MODE_MODULES: Readonly<Record<AuthMode, AuthModeModule>> = {
  OAUTH2: oauth2,
  OAUTH1: oauth1,
  API_KEY: apiKey,
  INSTALL_PLUGIN: installPlugin,
  BASIC: basic,
  OAUTH2_CC: oauth2ClientCredentials,
  JWT: jwt,
  APP: app,
  NONE: none,
  TWO_STEP: twoStep,
  BILL: bill,
  APP_STORE: appStore,
  TBA: tba,
  SIGNATURE: signature,
  CUSTOM: custom,
  MCP_OAUTH2: mcpOAuth2,
};

/** The module of a Provider's auth mode (the CRD's enum admits only these). */
export function authModeModule(mode: AuthMode): AuthModeModule {
  return AUTH_MODE_MODULES[mode];
}

/** The module of a mode named by data not checked against the enum, if it names one. */
export function findAuthModeModule(name: string): AuthModeModule | undefined {
  return Object.hasOwn(AUTH_MODE_MODULES, name) ? AUTH_MODE_MODULES[name as AuthMode] : undefined;
}

/** The module of stored credentials' type, if it names a mode (stored data is not trusted to). */
export function moduleOfCredentials(credentials: Pick<StoredCredentials, 'type'>): AuthModeModule | undefined {
  return findAuthModeModule(credentials.type);
}

/** The refresher's strategies: one per mode whose credentials are renewed. */
export function refreshStrategies(): ReadonlyMap<string, RefreshStrategy> {
  return new Map(Object.values(AUTH_MODE_MODULES).flatMap((m) => (m.refresh ? [[m.mode, m.refresh] as const] : [])));
}

/** The token `${accessToken}` stands for (for JWT the minted token, for SIGNATURE the computed value), if any. */
export function accessTokenOf(credentials: StoredCredentials): string | undefined {
  const v = credentials[moduleOfCredentials(credentials)?.proxy.accessTokenField ?? 'access_token'];
  return typeof v === 'string' && v ? v : undefined;
}

/**
 * The Provider's options block as GET /providers shows it (`{ two_step: … }`), when its mode has one and
 * the Provider declares it; empty otherwise.
 */
export function shownModeOptions(spec: ProviderSpec): Record<string, unknown> {
  const options = findAuthModeModule(spec.authMode)?.options;
  const block = options && (spec[options.field] as Record<string, unknown> | undefined);
  return options && block ? { [options.shownAs]: options.view(block) } : {};
}

/** The REST schema of every mode's options block, by the name GET /providers shows it under (modes sharing a block share it), in the mode type's order. */
export function modeOptionsViewSchemas(): Record<string, z.ZodType> {
  return Object.fromEntries(
    AUTH_MODES.map((mode) => AUTH_MODE_MODULES[mode]).flatMap((m) => (m.options ? [[m.options.shownAs, m.options.viewSchema]] : [])),
  );
}

/** Every mode's `credentials` of a POST /connections body, in the registry's order (CUSTOM's has none). */
export function importCredentialSchemas(): CredentialsSchema[] {
  return Object.values(AUTH_MODE_MODULES).flatMap((m) => (m.credentialSchemas.import ? [m.credentialSchemas.import] : []));
}

/** Every mode's `credentials` as a connection's answer shows them, in the registry's order. */
export function shownCredentialSchemas(): CredentialsSchema[] {
  return Object.values(AUTH_MODE_MODULES).flatMap((m) => (m.credentialSchemas.shown ? [m.credentialSchemas.shown] : []));
}

/** What the Provider reconciler reports of a Provider's mode: the module's own problems, else its options block's (checked by the mode's schema). */
export function providerModeProblems(spec: ProviderSpec): string[] {
  const module = findAuthModeModule(spec.authMode);
  if (!module) return [];
  const own = module.providerProblems(spec);
  const options = module.options;
  const block = options && spec[options.field];
  if (own.length || !options || block === undefined) return own;
  const parsed = options.schema.safeParse(block);
  if (parsed.success) return [];
  const first = parsed.error.issues[0];
  return [`spec.${options.field} is not usable (${first ? `${first.path.map(String).join('.')}: ${first.message}` : 'invalid'})`];
}
