/**
 * Strava, as its docs describe it:
 * - https://developers.strava.com/docs/authentication/ (GET https://www.strava.com/oauth/authorize with `client_id`,
 *   `redirect_uri`, `response_type=code`, `approval_prompt`, `scope` (comma delimited), `state`; the redirect back:
 *   `code` and `scope` (the scopes the user accepted), or `error=access_denied`, and `state` when it was given; POST
 *   https://www.strava.com/oauth/token with `client_id`, `client_secret`, `code`, `grant_type=authorization_code`;
 *   the answer: `token_type: "Bearer"`, `expires_at`, `expires_in: 21600`, `refresh_token`, `access_token` and
 *   `athlete`, a summary athlete; a refresh: `client_id`, `client_secret`, `grant_type=refresh_token`,
 *   `refresh_token`, answered with `token_type`, `access_token`, `expires_at`, `expires_in`, `refresh_token`: "Once a
 *   new refresh token is returned, the older refresh token is invalidated immediately"; GET /api/v3/athlete with
 *   `Authorization: Bearer`; invalidated tokens get "a 401 Unauthorized response")
 * - https://developers.strava.com/docs/reference/ (the summary and detailed athlete: `id`, `username`,
 *   `resource_state`, `firstname`, `lastname`, ...; errors are a Fault, `{"message", "errors": [{"resource",
 *   "field", "code"}]}`, as Strava's generated clients name it, https://docs.rs/crate/strava_client/latest/source/docs/Fault.md;
 *   an invalid token's 401 as Strava sends it: `{"message": "Authorization Error", "errors": [{"resource":
 *   "Athlete", "field": "access_token", "code": "invalid"}]}`, https://communityhub.strava.com/developers-api-7/401-error-1652)
 * Not simulated: "If the application has an access token for the user that expires in more than one hour, the
 * existing access token will be returned" (the simulator issues a new one on every refresh, so the test's forced
 * refresh, right after the grant, sees a new token).
 * Silent: each token error's Fault (the simulator sends the ones Strava is widely seen to send, 400 `{"message": "Bad
 * Request", "errors": [{"resource", "field", "code": "invalid"}]}` naming `AuthorizationCode`/`code`,
 * `RefreshToken`/`refresh_token` or `Application`/`client_id`).
 */
import {
  e2eCase,
  getRoute,
  json,
  nowSeconds,
  oauth2Provider,
  opaqueClient,
  type ProviderSimulator,
  type TokenFailure,
  tokenAnswer,
} from './framework.js';

const ATHLETE = { id: 134815, username: 'ada_lovelace', resource_state: 2, firstname: 'Ada', lastname: 'Lovelace', city: 'London' };

/** Strava's Fault for a token request that failed `why`. */
function fault(why: TokenFailure) {
  const [resource, field] =
    why === 'client' ? ['Application', 'client_id'] : why === 'refresh' ? ['RefreshToken', 'refresh_token'] : ['AuthorizationCode', 'code'];
  return json(400, { message: 'Bad Request', errors: [{ resource, field, code: 'invalid' }] });
}

export function strava(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'strava',
    docs: ['https://developers.strava.com/docs/authentication/', 'https://developers.strava.com/docs/reference/'],
    client: opaqueClient(String(100_000 + Math.floor(Math.random() * 800_000)), 20),
    authorize: {
      url: 'https://www.strava.com/oauth/authorize',
      provider: 'Strava',
      // The redirect carries the scopes the athlete accepted (all of those asked for, here).
      extra: (req) => ({ scope: req.query.get('scope') ?? '' }),
      denied: { error: 'access_denied' },
    },
    token: {
      url: 'https://www.strava.com/oauth/token',
      auth: 'body',
      refresh: { rotate: true },
    },
    answer: tokenAnswer('token_type expires_at expires_in refresh_token access_token athlete', {
      token_type: 'Bearer',
      expires_at: () => nowSeconds() + 21_600,
      expires_in: 21_600,
      // A refresh's answer has no athlete.
      athlete: (i) => (i.kind === 'authorization_code' ? ATHLETE : undefined),
    }),
    error: (_code, _description, why) => fault(why),
    api: [
      getRoute(
        'https://www.strava.com/api/v3/athlete',
        json(401, { message: 'Authorization Error', errors: [{ resource: 'Athlete', field: 'access_token', code: 'invalid' }] }),
        json(200, { ...ATHLETE, resource_state: 3 }),
      ),
    ],
    e2e: e2eCase('GET /api/v3/athlete', { id: ATHLETE.id, username: ATHLETE.username }, { refreshes: true, failure: 'denied' }),
  });
}
