import { pino, type Logger, type LoggerOptions } from 'pino';

/**
 * Paths pino replaces with "[redacted]". (`code` is not among them: it is our error codes far more often
 * than an OAuth authorization code, and no code path logs the latter.) Anything that can carry a credential is listed, at the
 * top level and one or two levels down, because pino's redaction matches exact paths only.
 */
export const SECRET_KEYS = [
  'access_token',
  'accessToken',
  'refresh_token',
  'refreshToken',
  'id_token',
  'idToken',
  'client_secret',
  'clientSecret',
  'oauth_token_secret',
  'oauthTokenSecret',
  'oauth_token',
  'oauthToken',
  'api_key',
  'apiKey',
  'password',
  'secretKey',
  'secret_key',
  'webhookSigningKey',
  'privateKey',
  'private_key',
  'authorization',
  'Authorization',
  'cookie',
  'token',
  'code_verifier',
  'codeVerifier',
  'credentials',
  'session_token',
  'sessionToken',
  'oauth_verifier',
  'state',
  'webhookSecret',
];
export const REDACT_PATHS = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
];

export type { Logger };

export function createLogger(level = 'info', options: LoggerOptions = {}, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'latchkey' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      ...options,
    },
    destination,
  );
}
