/** The provider authorization modes of the catalog (the spec lists exactly these fifteen). */
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
] as const;

export type AuthMode = (typeof AUTH_MODES)[number];
