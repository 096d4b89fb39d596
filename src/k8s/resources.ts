import type { KubernetesObject, V1ObjectMeta } from './kubernetes-client.js';
import type { AuthMode } from '../domain/auth-modes.js';
import type { Condition } from '../domain/conditions.js';
import type { LabelSelector } from '../domain/label-selector.js';
import type { StatusErrorEntry } from '../domain/connection-state.js';
import type { ConnectionStatusField } from '../domain/connection-status-writers.js';

/** API group and version of Latchkey's custom resources. */
export const GROUP = 'latchkey.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Labels Latchkey puts on the Secrets it owns (in the manner of External Secrets Operator). */
export const LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  managedByValue: 'latchkey',
  connection: 'latchkey.dev/connection',
  integration: 'latchkey.dev/integration',
  /** Users put this label on Secrets that Integrations and Environments refer to, so Latchkey watches them. */
  watch: 'latchkey.dev/watch',
  /** The controller replica that owns a connection (on the Connection and its Secret), written by that replica. */
  shard: 'latchkey.dev/shard',
  /** Marks a controller replica's shard-membership Lease (`latchkey-shard-<identity>`). */
  shardMember: 'latchkey.dev/shard-member',
  /** On a bound Secret: the CredentialBinding (in the same namespace) that writes it. */
  credentialBinding: 'latchkey.dev/credential-binding',
} as const;

export const ANNOTATIONS = {
  /** When the REST API last changed an Integration (the API's `updated_at`). */
  updatedAt: 'latchkey.dev/updated-at',
  /** On a Connection: a person asks for a refresh now (`kubectl latchkey refresh`); an ISO 8601 time, written by the plugin. */
  refreshRequestedAt: 'latchkey.dev/refresh-requested-at',
  /** On a Connection: what became of the last refresh request (JSON, src/domain/refresh-request.ts), written by the owning controller. */
  refreshRequest: 'latchkey.dev/refresh-request',
  /** On a bound Secret: when its token expires (RFC 3339; absent: no expiry, or emptied). */
  expiresAt: 'latchkey.dev/expires-at',
  /** On a bound Secret: the connection it holds the token of (`namespace/integration/connectionId`). */
  boundConnection: 'latchkey.dev/connection',
  /** On a rollout restart target's pod template: when a token change last restarted it (as kubectl.kubernetes.io/restartedAt). */
  restartedAt: 'latchkey.dev/restartedAt',
} as const;

/** The type of a Secret a CredentialBinding writes. */
export const BOUND_SECRET_TYPE = 'latchkey.dev/bound-token';

export const CREDENTIALS_SECRET_TYPE = 'latchkey.dev/connection-credentials';
/** The one key of a connection credentials Secret: the credentials as JSON. */
export const CREDENTIALS_KEY = 'credentials.json';

export type { Condition } from '../domain/conditions.js';

interface Resource<Spec, Status> extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string };
  spec: Spec;
  status?: Status;
}

export interface CommonStatus {
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface PaginateSpec {
  type?: 'cursor' | 'link' | 'offset';
  cursorPathInResponse?: string;
  limitNameInRequest?: string;
  cursorNameInRequest?: string;
  responsePath?: string;
}

/** What the Connect UI shows under a form field: what it is, an example, where to find it, in the end user's language. */
export interface FieldHelp {
  description?: string;
  /** Shown as the field's placeholder: never a real secret. */
  example?: string;
  /** The provider's own page that says where to find the value (https). */
  docsUrl?: string;
  /** The label in other languages (`fr`, `de`, `es`, `pt`, `en`); the default label otherwise. */
  labels?: Record<string, string>;
  /** The description in other languages. */
  descriptions?: Record<string, string>;
}

/** A provider's cheap authenticated call: any 2xx accepts the credentials, 401/403 refuses them. */
export interface VerificationSpec {
  /** The provider's page documenting the call. */
  docs?: string;
  method?: 'GET' | 'POST' | 'HEAD';
  /** Under `proxy.baseUrl`, or absolute on one of the provider's hosts; may use `${connectionConfig.X}`. */
  path: string;
  /** The call's full URL as the provider's docs give it: the catalog test compares `path` resolved against the base with it. */
  documentedUrl?: string;
  /** Headers of the call's own (the provider's `proxy.headers` are sent too). */
  headers?: Record<string, string>;
}

/**
 * Where a grant is revoked: RFC 7009 (`token=` and `token_type_hint` form-encoded, the client
 * authenticated as at the token endpoint), or the provider's own shape as data.
 */
export interface RevocationSpec {
  docs?: string;
  /** May use `${connectionConfig.X}` and `${clientId}`. */
  url: string;
  /** The endpoint as the provider's docs give it: the catalog test compares `url` as resolved with it. */
  documentedUrl?: string;
  method?: 'POST' | 'DELETE' | 'GET';
  /** Which token: the refresh token (revokes the grant where the provider ties them), else the access token. */
  token?: 'refresh_token' | 'access_token';
  /** Where the token goes: `form` (RFC 7009), `json` (a JSON object), `bearer` (an Authorization header, no body). */
  tokenIn?: 'form' | 'json' | 'bearer';
  /** The token's field name in a form or JSON body (`token`). */
  tokenField?: string;
  /** How the client authenticates: `basic`, `body` (client_id and client_secret beside the token), `none`; default as tokenRequestAuthMethod for `form`, none otherwise. */
  clientAuth?: 'basic' | 'body' | 'none';
}

export type TokenRequestAuthMethod = 'basic' | 'body' | 'private_key_jwt' | 'tls_client_auth' | 'none';

/** RFC 6749 (and RFC 7636) authorization request parameters a Provider may name otherwise. */
export type AuthorizationParamName = 'client_id' | 'redirect_uri' | 'state' | 'scope' | 'response_type';
/** RFC 6749 (and RFC 7636) token request parameters a Provider may name otherwise or leave out. */
export type TokenRequestParamName =
  'grant_type' | 'client_id' | 'client_secret' | 'code' | 'redirect_uri' | 'code_verifier' | 'refresh_token' | 'scope';

/** A provider that requires the Integration's TLS client certificate (mutual TLS, RFC 8705). */
export interface ClientCertificateSpec {
  /** Present it on proxied API calls too, not only on token requests. */
  apiCalls?: boolean;
}

export interface ProviderSpec {
  displayName: string;
  /** Other names users know this provider by: `GET /providers/{alias}` and an Integration's `provider` resolve to it. */
  aliases?: string[];
  /** Logo shown in the Connect UI (https, or http on a loopback host for local use). */
  logoUrl?: string;
  categories?: string[];
  authMode: AuthMode;
  authorizationUrl?: string;
  tokenUrl?: string;
  refreshUrl?: string;
  requestTokenUrl?: string;
  defaultScopes?: string[];
  scopeSeparator?: string;
  authorizationParams?: Record<string, string>;
  /**
   * OAUTH2: RFC 6749 parameters the provider's authorization URL does not take (Amazon Selling Partner's consent URI
   * names the application by `application_id`, an Integration's `authorizationParams`, and has no `response_type`).
   */
  authorizationOmits?: Array<'client_id' | 'response_type'>;
  /**
   * OAUTH2: the provider's names for RFC 6749 authorization parameters, sent under them instead (TikTok's Marketing API
   * names the client `app_id`); applied after `authorizationOmits`.
   */
  authorizationParamNames?: Partial<Record<AuthorizationParamName, string>>;
  /**
   * Keys of the Integration's `authorizationParams` the provider cannot authorize without (Amazon Selling Partner's
   * `application_id`): an Integration without one is not Ready, and a connect attempt is refused before it starts.
   */
  requiredAuthorizationParams?: string[];
  /** OAUTH2: the callback's parameter that carries the authorization code, when not `code` (Amazon Selling Partner: `spapi_oauth_code`). */
  callbackCodeParam?: string;
  /**
   * OAUTH2: the provider's `redirect_uri` is a name registered with it for the callback URL (eBay's RuName), sent in
   * the authorization and token requests instead of the URL; the Integration gives it (`redirectUriName`).
   */
  redirectUriIsName?: boolean;
  /** OAUTH1: the authorize URL parameter naming the application on the consent page (Trello's `name`). */
  appNameParam?: string;
  tokenParams?: Record<string, string>;
  /** Token endpoint client authentication (src/auth/token-request.ts); `body` when not set. */
  tokenRequestAuthMethod?: TokenRequestAuthMethod;
  /**
   * Token requests present the Integration's TLS client certificate (`clientCertificateRef`); with
   * `apiCalls`, proxied calls too. `tokenRequestAuthMethod: tls_client_auth` presents it on token requests without this.
   */
  clientCertificate?: ClientCertificateSpec;
  /**
   * Token request parameters the provider's endpoint does not take, left out of every token request (TikTok's Marketing
   * API takes no `grant_type` or `redirect_uri`); applied before `tokenRequestParamNames`.
   */
  tokenRequestOmits?: TokenRequestParamName[];
  /**
   * The provider's names for token request parameters, sent under them instead (TikTok's Marketing API: `app_id`,
   * `secret`, `auth_code` for `client_id`, `client_secret`, `code`).
   */
  tokenRequestParamNames?: Partial<Record<TokenRequestParamName, string>>;
  /** How token requests encode their parameters (`query`: in the URL of a POST without a body); `form` when not set. */
  tokenRequestBodyFormat?: 'form' | 'json' | 'query';
  disablePkce?: boolean;
  /** Plain strings are the old form (read for one release): `x` is `{ name: x, required: true }`. */
  connectionConfiguration?: Array<string | ConnectionConfigField>;
  fieldLabels?: Record<string, string>;
  /** Connect UI help per form field (credential field or configuration key). */
  fieldHelp?: Record<string, FieldHelp>;
  modeOptions?: Record<string, unknown>;
  /** TWO_STEP: the token exchange (checked by src/modes/two-step/two-step.ts). */
  twoStep?: Record<string, unknown>;
  /** APP_STORE: the minted token's lifetime (at most Apple's 20 minutes). */
  appStore?: { lifetimeSeconds?: number };
  /** TBA (NetSuite token-based authentication): where the account ID (the realm) is, how requests are signed. */
  tba?: { accountIdKey?: string; signatureMethod?: 'HMAC-SHA256' | 'HMAC-SHA1' };
  /** BASIC: a credential field the provider's docs fix (lemlist's empty user name), never asked (src/modes/basic/options.ts). */
  basic?: { fixed?: { username?: string; password?: string } };
  /** SIGNATURE: the per-request signature the provider expects (WSSE), how long one is accepted, and its header. */
  signature?: { protocol: 'WSSE'; lifetimeSeconds?: number; header?: string };
  /** APP and CUSTOM (code-host app installations): see docs/auth-modes.md. */
  appInstallation?: AppInstallationSpec;
  pluginInstall?: PluginInstallSpec;
  /** MCP_OAUTH2: the remote MCP server; everything else is discovered from it (src/modes/mcp-oauth/, docs/mcp.md). */
  mcp?: { serverUrl: string; scopes?: string[]; docs?: string[] };
  /** OAUTH2: how the token endpoint answers where it departs from RFC 6749 (src/auth/provider-answers.ts). */
  tokenResponse?: TokenResponseSpec;
  /** OAUTH2: requests run after the token whose answers fill connection configuration (src/auth/post-connection.ts). */
  postConnection?: PostConnectionSpec;
  postConnectionScript?: string;
  webhookRoutingScript?: string;
  /** How the provider's own webhooks are verified and routed (src/webhooks/provider-*.ts, docs/provider-webhooks.md). */
  webhooks?: ProviderWebhooksSpec;
  docs?: string;
  /** API_KEY, BASIC: a cheap authenticated call that checks typed credentials before they are stored (src/modes/shared/credential-check.ts). */
  verification?: VerificationSpec;
  /** OAUTH2: where a connection's grant is revoked when it is deleted (src/auth/grant-revocation.ts). */
  revocation?: RevocationSpec;
  proxy?: {
    baseUrl?: string;
    decompress?: boolean;
    headers?: Record<string, string>;
    query?: Record<string, string>;
    /** Top-level fields set in the JSON object body of every call, for APIs taking the credential there (Mandrill's `key`; src/proxy/json-body-fields.ts). */
    body?: Record<string, string>;
    paginate?: PaginateSpec;
  };
}
/**
 * A provider's webhooks as data: the signature scheme, the handshake, the delivery ID and the field that
 * names the account (matched against a connection configuration value). Checked by the Provider CRD.
 */
export interface ProviderWebhooksSpec {
  /** The routing's name, shown as `webhook_routing_script` by GET /providers/{p} (as postConnection.name is post_connection_script). */
  name?: string;
  /** The provider's documentation pages these facts come from. */
  docs?: string[];
  /** Largest body accepted, in bytes (at most what one outbox ConfigMap holds). */
  maxBodyBytes?: number;
  signature: WebhookSignatureSpec;
  /** Other schemes the same provider signs with (Jira: admin webhooks' HMAC, OAuth apps' JWT): any one verifying suffices. */
  alternatives?: WebhookSignatureSpec[];
  handshake?: WebhookHandshakeSpec;
  /** An event whose array at this body path is empty is a heartbeat (Asana): answered 2xx, not forwarded. */
  heartbeat?: { bodyPath: string };
  /** Where the provider's delivery ID is (duplicates are dropped): a header, or a body path. */
  deliveryId?: WebhookValueSource;
  /** Where the account is, and which connection configuration key holds it on the connection. */
  account?: WebhookValueSource & { connectionConfigKey: string; suffix?: string };
}
export type WebhookHandshakeType = 'slack-url-verification' | 'graph-validation-token' | 'zoom-url-validation' | 'asana-hook-secret';
export interface WebhookHandshakeSpec {
  type: WebhookHandshakeType;
  /**
   * asana-hook-secret: the proxied call that creates a webhook (method and path under the proxy). It
   * opens the Integration's handshake window while in flight; a handshake outside one is refused.
   */
  opensOn?: { method: string; path: string };
  /** How long a window stays open at most, in seconds (default 30), should its proxied call never end. */
  windowSeconds?: number;
}
/** A header (lower case) or a dotted path into the JSON body (`*` takes every element of an array). */
export interface WebhookValueSource {
  header?: string;
  bodyPath?: string;
}
export interface WebhookSignatureSpec {
  /**
   * hmac-sha256 (hmac-sha1: Intercom): over `signedContent`; stripe: `t=…,v1=…` over `{t}.{body}`; client-state: a
   * shared value in the body; jwt-hs256: a JWT (HS256) in `header` after `prefix`, its `exp`/`iat` within `timestamp.toleranceSeconds`.
   * With the asana-hook-secret handshake the secrets are those handshakes handed over, not `secretKey`.
   */
  scheme: 'hmac-sha256' | 'hmac-sha1' | 'stripe' | 'client-state' | 'jwt-hs256';
  /** The header carrying the signature (hmac-sha256, stripe) */
  header?: string;
  /** What precedes the digest in the header (`sha256=`, `v0=`). */
  prefix?: string;
  encoding?: 'hex' | 'base64';
  /** Template of the signed bytes: `{body}`, `{method}`, `{url}`, `{header:NAME}`; default `{body}`. */
  signedContent?: string;
  /** The key of the Integration's Secret holding the signing secret (default webhookSecret). */
  secretKey?: 'webhookSecret' | 'clientSecret';
  /** A secret per provider webhook (Airtable): its ID at this body path picks the key `<secretKey>.<ID>`. */
  secretKeyFrom?: { bodyPath: string };
  /** How the stored secret is turned into the HMAC key: as written (utf8, default) or base64-decoded. */
  secretEncoding?: 'utf8' | 'base64';
  /** A timestamp the signature covers (in a header, or in the signed body), and how far from now it may be. */
  timestamp?: { header?: string; bodyPath?: string; unit?: 'seconds' | 'milliseconds'; toleranceSeconds: number };
  /** client-state: the body path holding the shared value on each notification. */
  bodyPath?: string;
}
/** Endpoints of an app installation flow (APP, CUSTOM); URLs may use `${connectionConfig.KEY}`. */
/** INSTALL_PLUGIN: the install page and what its signed callback carries (src/modes/install-plugin/plugin-install-flow.ts). */
export interface PluginInstallSpec {
  /** The install page; may contain ${connectionConfig.KEY}; `state` and `redirect_uri` are added as query parameters. */
  installUrl: string;
  /** Callback parameter holding the credential (stored as `apiKey`). */
  credentialParam: string;
  /** Callback parameters stored as connection configuration (e.g. an account ID). */
  configParams?: string[];
  /** Callback parameter with the hex HMAC-SHA256 (default `signature`). */
  signatureParam?: string;
  /** Callback parameter with the Unix time of the signature (default `timestamp`). */
  timestampParam?: string;
  /** How old a signed callback may be, in seconds (default 300). */
  maxAgeSeconds?: number;
}
export interface AppInstallationSpec {
  /** GET with the app's JWT: the installation, to check which app it belongs to. Default: tokenUrl without `/access_tokens`. */
  installationUrl?: string;
  /** CUSTOM: the OAuth token endpoint of the app's user authorization (code and refresh-token grants). */
  userTokenUrl?: string;
  /** CUSTOM: GET with the user token: the installations the user can access (proof that the installation is theirs). */
  userInstallationsUrl?: string;
}
/** One connection configuration key of a Provider and what its value may be (src/catalog/connection-config.ts). */
export interface ConnectionConfigField {
  name: string;
  label?: string;
  /** A regular expression the whole value must match. */
  pattern?: string;
  enum?: string[];
  /** The value is a host name equal to or under one of these domains. */
  hostSuffixes?: string[];
  /**
   * The value is any public host name: for modes that send no integration secret, or a key the
   * Integration sets (`setBy: integration`), never one an end user types where the client secret follows.
   */
  anyHost?: boolean;
  /**
   * The value is a URL path (`/jira`, `/a/b`) or empty: a self-managed server's context path. Only after the
   * host of a URL template; each segment letters, digits, `.`, `_`, `~`, `-` (never `.` or `..`); filled with its
   * `/` as they are, and empty (or absent) fills nothing.
   */
  urlPath?: boolean;
  /**
   * `integration`: the platform team sets the value on the Integration (`spec.connectionConfig`); it is never
   * asked of the end user, a caller may not give another, and every connection of the Integration carries it.
   */
  setBy?: 'integration';
  required?: boolean;
  default?: string;
  /** A value the provider returns: never asked of the end user; checked by the rule above before it is stored or used. */
  from?: ConfigValueSource;
}
/**
 * Where a provider-returned configuration value comes from: exactly one of `tokenResponse` (a path in the
 * token answer), `callback` (a query parameter of the OAuth callback) or `step` (a post-connection step,
 * with `path` in its picked item). Paths are dotted (`team.id`; a number indexes an array).
 */
export interface ConfigValueSource {
  tokenResponse?: string;
  callback?: string;
  step?: string;
  path?: string;
  /**
   * `host`: keep the host name of a URL value (`https://x.my.salesforce.com` -> `x.my.salesforce.com`);
   * `subdomain`: its first label (`https://acme.pipedrive.com` -> `acme`).
   */
  as?: 'host' | 'subdomain';
  /** A regular expression applied after `as`: its first group (or the whole match) is the value; no match, no value. */
  match?: string;
}
/** A token endpoint's departures from RFC 6749, as the provider documents them. */
export interface TokenResponseSpec {
  /** The provider's documentation pages these shapes come from. */
  docs?: string[];
  /**
   * A 200 answer that is an error: the value at `path` equals `equals` (Slack: `{ path: ok, equals: false }`), or
   * differs from `notEquals` (TikTok's Marketing API: `{ path: code, notEquals: 0 }`); exactly one of the two.
   */
  errorWhen?: { path: string; equals?: string | number | boolean; notEquals?: string | number | boolean };
  /** Where the error code is in such an answer (default `error`). */
  errorCodePath?: string;
  /** Where the error's description is in such an answer (default `error_description`; TikTok: `message`). */
  errorDescriptionPath?: string;
  /** The token fields are nested under this path (Slack user tokens: `authed_user`). */
  tokenPath?: string;
  /** `expires_in: 0` means the token never expires (Mailchimp), not that it already has. */
  expiresInZeroMeansNever?: boolean;
  /**
   * Where the access token's expiry time sits in the answer, for providers that give a time, not a lifetime
   * (Clover's `access_token_expiration`, Unix seconds): epoch seconds or milliseconds, or ISO 8601. Read
   * before `expires_in`; an answer without a usable value there falls back to `expires_in`.
   */
  expiresAtPath?: string;
}
/** Requests run after the token, in order; their answers fill `from: { step }` configuration values. */
export interface PostConnectionSpec {
  /** Shown as `post_connection_script` by GET /providers/{p}. */
  name: string;
  docs?: string[];
  steps: PostConnectionStep[];
}
export interface PostConnectionStep {
  name: string;
  /** Default GET. */
  method?: 'GET' | 'POST';
  /**
   * Absolute, or a path under proxy.baseUrl; may use `${connectionConfig.X}` of values set earlier, and
   * `${accessToken}` in its query (Bullhorn's login takes the token as `access_token=`).
   */
  url: string;
  /**
   * The path in the answer of a session token the provider's API takes (Bullhorn's `BhRestToken`): kept in
   * the credentials as `session_token` (the proxy's `${sessionToken}`), never in configuration; the step runs
   * at every connection, import and refresh, so each new access token logs in again. One object, no `items`.
   */
  sessionToken?: string;
  /** The request's full URL as the provider's docs give it: the catalog test compares `url` resolved against the base with it. */
  documentedUrl?: string;
  /** Default: `Authorization: Bearer <access token>`; values may use `${accessToken}` and `${connectionConfig.X}`. */
  headers?: Record<string, string>;
  /** POST only: the request body, sent as is (`content-type: application/json` unless `headers` say otherwise). */
  body?: string;
  /** Path to the list of accounts in the answer (`''`: the answer is the list); absent: the answer is one object. */
  items?: string;
  /** The account the provider's docs name: the first item whose `path` equals `equals` (none: the step fails). */
  pick?: { path: string; equals: string | number | boolean };
  /**
   * What to do when the list holds more than one account and no `pick` names one (default refuse):
   * `choose` asks the end user in the Connect UI (an import: the application gives the value).
   */
  several?: 'first' | 'refuse' | 'choose';
  /** `several: choose`: the path in an account of its name as the provider returns it (shown to the end user). */
  accountLabel?: string;
  /** `several: choose`: the path in an account of its URL as the provider returns it (shown beside the name). */
  accountUrl?: string;
  /** Time limit of the request (default 10). */
  timeoutSeconds?: number;
}
export type ProviderResource = Resource<ProviderSpec, CommonStatus>;

export interface IntegrationSpec {
  provider: string;
  displayName?: string;
  clientSecretRef?: { name: string };
  /** A kubernetes.io/tls Secret (`tls.crt`, `tls.key`) for providers that require a client certificate (mutual TLS). */
  clientCertificateRef?: { name: string };
  scopes?: string[];
  authorizationParams?: Record<string, string>;
  /** The name the provider registered for Latchkey's callback URL, for a Provider with `redirectUriIsName` (eBay's RuName). */
  redirectUriName?: string;
  /** Values of the Provider's `setBy: integration` configuration keys (a self-managed server's host), copied into every connection. */
  connectionConfig?: Record<string, string>;
}
export interface IntegrationStatus extends CommonStatus {
  /** Where the provider sends this Integration's webhooks, when its Provider declares them. */
  webhookUrl?: string;
}
export type IntegrationResource = Resource<IntegrationSpec, IntegrationStatus>;

export interface EndUserSpec {
  id?: string;
  email?: string;
  displayName?: string;
  tags?: Record<string, string>;
  organization?: { id?: string; displayName?: string };
}

export interface ConnectionSpec {
  integration: string;
  provider: string;
  connectionId: string;
  id: number;
  authMode: AuthMode;
  endUser?: EndUserSpec;
  metadata?: Record<string, unknown>;
  connectionConfig?: Record<string, unknown>;
}

/** An entry of `status.errors`; `refreshFailure` marks a failed token refresh as permanent or transient. */
export type ConnectionError = StatusErrorEntry;

export interface ConnectionStatus extends CommonStatus {
  expiresAt?: string;
  nextRefreshAt?: string;
  lastRefreshedAt?: string;
  refreshAttempts?: number;
  lastFetchedAt?: string;
  updatedAt?: string;
  errors?: ConnectionError[];
}
export type ConnectionResource = Resource<ConnectionSpec, ConnectionStatus>;
/** Fails to compile when a status field has no writers listed in src/domain/connection-status-writers.ts. */
export type ConnectionStatusFieldsOwned = AssertTrue<
  [Exclude<keyof ConnectionStatus, ConnectionStatusField>] extends [never] ? true : false
>;
type AssertTrue<T extends true> = T;

/**
 * Who a Connection is, without its spec or status: what a sharded controller replica keeps of the
 * Connections it does not own (it needs their names to hash them, and their shard label).
 */
export interface ConnectionIdentity extends KubernetesObject {
  metadata: Pick<V1ObjectMeta, 'uid' | 'resourceVersion' | 'creationTimestamp' | 'deletionTimestamp' | 'labels'> & {
    name: string;
    namespace?: string;
  };
}

export interface EnvironmentSpec {
  mode?: 'development' | 'production';
  secretRef: { name: string };
  webhooks?: {
    url?: string;
    sendOnCreation?: boolean;
    sendOnOverride?: boolean;
    sendOnRefreshFailure?: boolean;
    /** Signature headers on each webhook (default: standard only). */
    signatures?: Array<'standard' | 'nango'>;
  };
  api?: {
    /** Whether the REST API may write Integrations (default false: Integrations from Git only). */
    integrationWrites?: boolean;
  };
  callbackUrl?: string;
  /** Which namespaces may bind this Environment's connections (none when absent). */
  credentialBindings?: { namespaceSelector: LabelSelector };
  connectUI?: {
    /**
     * Origins (`https://app.example.com`, no path) whose pages may embed the Connect UI in an iframe;
     * also the only target origins of the embedded UI's postMessage events. Empty: no framing.
     */
    allowedOrigins?: string[];
    /** The application's name in the Connect UI ("Acme wants access to your Salesforce account"). */
    appName?: string;
    /** The application's logo (https). */
    appLogoUrl?: string;
    /** The application's brand colour, `#RRGGBB`; adjusted for contrast where it is shown (src/domain/colour-contrast.ts). */
    brandColor?: string;
  };
}
export type EnvironmentResource = Resource<EnvironmentSpec, CommonStatus>;

export interface CredentialBindingSpec {
  connectionRef: { namespace: string; integration: string; connectionId: string };
  /** Refresh a token due within this many seconds before writing it (default 120). */
  refreshBeforeSeconds?: number;
  target?: { name?: string; template?: Record<string, string> };
  rolloutRestartTargets?: Array<{ kind: 'Deployment' | 'StatefulSet'; name: string }>;
}
export interface CredentialBindingStatus extends CommonStatus {
  secretName?: string;
  expiresAt?: string;
  lastSyncTime?: string;
}
export type CredentialBindingResource = Resource<CredentialBindingSpec, CredentialBindingStatus>;

/** Keys of the Secret an Environment refers to. */
export const ENVIRONMENT_SECRET_KEYS = { secretKey: 'secretKey', webhookSigningKey: 'webhookSigningKey' } as const;
/** Keys of the Secret an Integration refers to. */
export const INTEGRATION_SECRET_KEYS = {
  clientId: 'clientId',
  clientSecret: 'clientSecret',
  appId: 'appId',
  privateKey: 'privateKey',
  /** The ID of the key `privateKey` holds (a JWT's `kid`: private_key_jwt client assertions). */
  keyId: 'keyId',
  /** The X.509 certificate of `privateKey` (PEM; public): SAML bearer assertions' signer, registered with the provider. */
  certificate: 'certificate',
  /** The secret a provider signs its webhooks with (when it is not the client secret). */
  webhookSecret: 'webhookSecret',
} as const;

export interface Kind<T extends KubernetesObject> {
  kind: string;
  plural: string;
  namespaced: boolean;
  /** Phantom field so the kind carries its object type. */
  readonly _type?: T;
}

export const PROVIDERS: Kind<ProviderResource> = { kind: 'Provider', plural: 'providers', namespaced: false };
export const INTEGRATIONS: Kind<IntegrationResource> = { kind: 'Integration', plural: 'integrations', namespaced: true };
export const CONNECTIONS: Kind<ConnectionResource> = { kind: 'Connection', plural: 'connections', namespaced: true };
export const ENVIRONMENTS: Kind<EnvironmentResource> = { kind: 'Environment', plural: 'environments', namespaced: true };
export const CREDENTIAL_BINDINGS: Kind<CredentialBindingResource> = {
  kind: 'CredentialBinding',
  plural: 'credentialbindings',
  namespaced: true,
};
