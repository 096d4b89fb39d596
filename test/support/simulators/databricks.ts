/**
 * A Databricks workspace's OAuth token endpoint for service principals (OAuth M2M), as Databricks documents it:
 * - https://docs.databricks.com/aws/en/dev-tools/auth/oauth-authorization-details ("Request a token": POST
 *   https://<databricks-instance>/oidc/v1/token with `curl --user "$CLIENT_ID:$CLIENT_SECRET" --data
 *   'grant_type=client_credentials' --data 'scope=all-apis'`: the client ID and OAuth secret as HTTP Basic, a form)
 * - https://docs.databricks.com/aws/en/dev-tools/auth/oauth-m2m (each access token is valid for one hour)
 * Databricks' Go SDK (config/auth_m2m.go) sends the same request: client credentials in the header, scope all-apis.
 * Silent in the pages read: the answer's fields beyond a one-hour token (the simulator answers RFC 6749's
 * `access_token`, `token_type`, `expires_in: 3600`) and the error answer (RFC 6749's `invalid_client` with 401,
 * `invalid_request` and `unsupported_grant_type` with 400: the simulator's own).
 * No API route: test/providers/token-request-shapes.test.ts checks the token request itself.
 */
import { authServer, basicClientCredentials, opaque, type ServedSimulator } from './framework.js';

/** The docs' example workspace host. */
export const DATABRICKS_WORKSPACE = 'dbc-a1b2345c-d6e7.cloud.databricks.com';

/** Without an end-to-end case: test/providers/token-request-shapes.test.ts drives it itself. */
export function databricksWorkspace(): ServedSimulator {
  const { state, grants } = authServer();
  // A service principal's application ID (a UUID) and an OAuth secret.
  const client = { clientId: crypto.randomUUID(), clientSecret: opaque('dose', 32) };
  return {
    manifest: 'databricks-workspace',
    hosts: [DATABRICKS_WORKSPACE],
    docs: [
      'https://docs.databricks.com/aws/en/dev-tools/auth/oauth-authorization-details',
      'https://docs.databricks.com/aws/en/dev-tools/auth/oauth-m2m',
    ],
    client,
    state,
    routes: [
      {
        method: 'POST',
        host: DATABRICKS_WORKSPACE,
        path: '/oidc/v1/token',
        handler: basicClientCredentials(grants, client, (accessToken) => ({
          access_token: accessToken,
          token_type: 'Bearer',
          expires_in: 3600,
        })),
      },
    ],
  };
}
