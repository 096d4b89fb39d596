/**
 * The provider authorization modes of the catalog: the spec's fifteen, and MCP_OAUTH2 (a remote MCP
 * server's authorization, discovered as MCP's authorization spec describes: docs/mcp.md).
 */
export const AUTH_MODES = [
  'OAUTH1',
  'OAUTH2',
  'OAUTH2_CC',
  'BASIC',
  'API_KEY',
  'APP_STORE',
  'CUSTOM',
  'APP',
  'NONE',
  'TBA',
  'JWT',
  'BILL',
  'TWO_STEP',
  'SIGNATURE',
  'INSTALL_PLUGIN',
  'MCP_OAUTH2',
] as const;

export type AuthMode = (typeof AUTH_MODES)[number];

/**
 * Modes whose token is minted here (never renewed ahead), by the field holding it: its lifetime is
 * the JWT's own `exp` − `iat`. Kept in step with those modes' modules by test/modes/registry.unit.test.ts.
 */
export const MINTED_TOKEN_FIELD: Readonly<Partial<Record<AuthMode, 'token' | 'access_token'>>> = {
  JWT: 'token',
  APP_STORE: 'access_token',
};

/**
 * Modes that send no integration secret to a URL built from the connection configuration: only these may
 * let a caller give any host (`anyHost`); the others only on a key the Integration sets (`setBy: integration`).
 */
export const MODES_WITHOUT_INTEGRATION_SECRET: readonly AuthMode[] = ['API_KEY', 'BASIC', 'NONE', 'JWT', 'TWO_STEP'];
