/**
 * What one auth mode decides, in one module per mode (src/modes/<mode>/mode.ts), found through the
 * registry (./registry.ts): the credentials it accepts on import (both import bodies) and from the
 * Connect form, its end-user flow, how it renews (or that it does not), how the proxy injects it, and
 * what it requires of a Provider and an Integration. Import, the Connect flows, the refresher, the
 * proxy and the Provider and Integration reconcilers look the mode up instead of switching on it.
 * A mode's machinery (signing, minting, its redirect flow) is in its folder, what several modes use in
 * src/modes/shared/, the OAuth machinery every OAuth mode uses in src/auth. A mode module
 * imports no HTTP and no Kubernetes client: what it reads of the cluster comes through the store it
 * is handed (types only from src/k8s).
 */
import type { z } from 'zod';
import type { FlowState } from '../auth/flow-state.js';
import type { RefreshStrategy } from '../auth/refresh/strategies.js';
import type { AuthMode } from '../domain/auth-modes.js';
import type { LatchkeyError } from '../domain/errors.js';
import type { ClientRegistrationStore } from '../k8s/client-registrations.js';
import type { FlowRecords } from '../k8s/flow-records.js';
import type { IntegrationResource, ProviderResource, ProviderSpec } from '../k8s/resources.js';
import type { CatalogStore, ConnectionStore, StoredCredentials } from '../k8s/store.js';

/** What a mode may use: the informer-backed catalog (read only), the guarded fetch, the clock. */
export interface ModeDeps {
  catalog: CatalogStore;
  fetch: typeof fetch;
  clock: { now(): number };
}

/** Given credentials: an import body's `credentials` (schema-checked, `type` is the mode) or a form's values with `type`. */
export type GivenCredentials = { type: string } & Record<string, unknown>;

export interface ImportInput {
  namespace: string;
  integration: IntegrationResource;
  provider: ProviderResource;
  given: GivenCredentials;
  /** The body's `connection_config`. */
  connectionConfig?: Record<string, unknown>;
  /** The configuration a re-imported connection keeps (what minting or an exchange may use, under the body's). */
  keptConfig?: Record<string, unknown>;
}

/** Credentials to store; `connectionConfig` replaces the body's when the mode fills it (APP: the installation). */
export interface Imported {
  credentials: StoredCredentials;
  connectionConfig?: Record<string, unknown>;
}

/** The credential fields of the deprecated flat `POST /connection` body (already validated for shape). */
export interface FlatCredentialFields {
  access_token?: string;
  refresh_token?: string;
  /** ISO 8601 (or anything `new Date` reads; the schema checked it). */
  expires_at?: string;
  expires_in?: number;
  no_expiration?: boolean;
  oauth_client_id_override?: string;
  oauth_client_secret_override?: string;
  oauth_token?: string;
  oauth_token_secret?: string;
  username?: string;
  password?: string;
  api_key?: string;
  token_id?: string;
  token_secret?: string;
}

export interface FlatImportInput extends Omit<ImportInput, 'given'> {
  fields: FlatCredentialFields;
}

/** A form field of the Connect UI. */
export interface CredentialField {
  name: string;
  secret: boolean;
  required: boolean;
  /** The Provider's own label for it (TWO_STEP declares its fields with labels). */
  label?: string;
}

export interface FormInput {
  namespace: string;
  integration: IntegrationResource;
  provider: ProviderResource;
  /** The validated form values, by field name. */
  values: Record<string, string>;
  connectionConfig: Record<string, string>;
  /** The field's label as the end user reads it (for error messages). */
  label(name: string): string;
}

/**
 * A form's outcome: credentials to store, or the provider's refusal of what was typed (the Connect
 * flow logs it as a failed attempt; `answer` is the provider's redacted words for the log line).
 * Other invalid input is thrown as a LatchkeyError.
 */
export type FormOutcome = { credentials: StoredCredentials } | { refused: LatchkeyError; detail?: string; answer?: string };

/** What a redirect flow uses: a mode's deps and the flow records (single use, OAuth 1's temporary secret). */
export interface RedirectDeps extends ModeDeps {
  flows: FlowRecords;
  /** The connection a reconnect keeps (its configuration, its installation). */
  connections: ConnectionStore;
  /** Clients registered at authorization servers for an Integration (MCP_OAUTH2's RFC 7591 registrations). */
  registrations?: ClientRegistrationStore;
  /** Latchkey's public base URL (where it serves what an authorization server fetches: a Client ID Metadata Document). */
  config?: { publicBaseUrl: string };
}

/** The start of a redirect flow; the Connect flow has checked the session, the reconnect and the quota. */
export interface RedirectStart {
  integration: IntegrationResource;
  provider: ProviderResource;
  /** The state every flow seals; the flow adds its mode, the connection configuration and its own values. */
  base: Omit<FlowState, 'mode' | 'connectionConfig'>;
  /** The Environment's secret key the state is sealed under. */
  secretKey: string;
  /** The connection configuration sent with the start, unchecked. */
  rawConfig: unknown;
  /** That configuration checked by the Provider's rules (a reconnect's stored one): what a flow without keys of its own uses. */
  checkedConfig(): Promise<Record<string, string>>;
  /** The application's name a provider's consent page shows. */
  appName: string;
  /** Values a failed start must not log (the client secret): the flow adds those it uses. */
  secrets: Array<string | undefined>;
}

/** Where the browser goes, and what it goes to in the operation log's words ("GitHub", "install the app"). */
export interface RedirectStarted {
  url: string;
  to: string;
}

/** The callback of a redirect flow whose state, browser binding and single use the Connect flow has checked. */
export interface RedirectCallback {
  state: FlowState;
  /** The sealed state as the callback carried it. */
  stateValue: string;
  url: URL;
  integration: IntegrationResource;
  provider: ProviderResource;
  /** The integration's name as the end user reads it. */
  name: string;
  /** The configuration the token request uses (a reconnect's, less the values the provider returns). */
  exchangeConfig: Record<string, string>;
  /** Values of the callback and the token request no log line may show: the flow adds those it uses. */
  secrets: Array<string | undefined>;
}

/** What a callback authorized: credentials and configuration to store. */
export interface Authorized {
  credentials: StoredCredentials;
  connectionConfig: Record<string, string>;
  /** OAuth 2: the configuration the Provider's post-connection values are taken from (src/auth/post-connection.ts). */
  providerValuesFrom?: Record<string, string>;
}

/**
 * A mode's redirect flow: the browser is sent to the provider and comes back to the OAuth callback.
 * A provider's failure in a handshake is thrown as `TokenExchangeFailed` (src/modes/shared/provider-failure.ts);
 * other LatchkeyErrors are the flow's own refusals.
 */
export interface RedirectFlow {
  start(deps: RedirectDeps, input: RedirectStart): Promise<RedirectStarted>;
  complete(deps: RedirectDeps, input: RedirectCallback): Promise<Authorized>;
  /** The provider answered an error instead of authorizing: what the flow lets go (OAuth 1's temporary secret). */
  abandon?(deps: RedirectDeps, state: FlowState): Promise<void>;
  /** Callback values no log line may show besides the OAuth ones (the credential a plugin install carries). */
  callbackSecrets?(deps: RedirectDeps, state: FlowState, query: URLSearchParams): string[];
  /** Connection configuration the flow fills itself, never asked from the end user. */
  suppliedKeys(spec: ProviderSpec): ReadonlySet<string>;
}

export type ConnectFlow =
  | ({ flow: 'redirect' } & RedirectFlow)
  | {
      flow: 'form';
      fields(spec: ProviderSpec): CredentialField[];
      /** The form's values as credentials to store (checked with the provider where the mode needs it). */
      credentials(deps: ModeDeps, input: FormInput): Promise<FormOutcome>;
    };

export interface OAuth1Consumer {
  consumerKey: string;
  consumerSecret: string;
}

export interface AuthorizationInput {
  spec: ProviderSpec;
  credentials: StoredCredentials;
  /** Headers already decided (templated ones); an `authorization` among them wins. */
  headers: Record<string, string>;
  method: string;
  /** The target URL, made only when a signature covers it (OAuth 1, TBA). */
  url: () => URL;
  /** Parameters of a form-encoded body (OAuth 1 signs them). */
  formParams?: URLSearchParams;
  /** The integration's consumer key and secret (OAUTH1, TBA), a connection's override first. */
  oauth1Consumer?: (override?: { client_id?: string; client_secret?: string }) => OAuth1Consumer | undefined;
  /** The connection's configuration (TBA's realm is its account ID). */
  connectionConfig?: Record<string, unknown>;
}

export interface ProxyInjection {
  /** The field `${accessToken}` stands for (and a bearer mode sends). */
  accessTokenField: 'token' | 'access_token';
  /** Refreshed before a proxied call and once after a 401 (the request body is kept to send again). */
  refreshesOnUse: boolean;
  /** Signs form-encoded bodies (OAuth 1.0a, TBA): the proxy reads them whole. */
  signsFormBody: boolean;
  /** The Authorization header, or undefined when the mode needs none (or the templates set it). */
  authorization(input: AuthorizationInput): string | undefined;
  /** Headers of its own on every call, under the templated ones (BILL's session). */
  defaultHeaders?(credentials: StoredCredentials): Record<string, string>;
  /** A header set over everything else (SIGNATURE's value when no template places it). */
  ownHeader?(spec: ProviderSpec, credentials: StoredCredentials): [string, string] | undefined;
  /** Credentials with a value computed for this one use, never stored (SIGNATURE); fetch answers it too. */
  perUse?(spec: ProviderSpec, credentials: StoredCredentials, now: number): StoredCredentials;
}

/** A key the Integration's client Secret must hold; `or`: another key the same value may be under; `pem`: a PEM private key. */
export interface NeededKey {
  key: string;
  or?: string;
  pem?: boolean;
}

/** The integrations API's credential shapes (Nango's). */
export type IntegrationCredentialsShape = 'OAUTH2' | 'OAUTH1' | 'TBA' | 'APP';

export interface IntegrationNeeds {
  /** Keys its client Secret must hold (the Integration reconciler checks them); none when the mode needs none. */
  secret?: { keys: NeededKey[]; why: string };
  /** The Connect UI refuses to start before the Integration's client is set (it signs or redirects with it). */
  clientBeforeConnect: boolean;
  /** The shape the integrations API shows its credentials in (null when none). */
  shownAs?: IntegrationCredentialsShape;
  /** The shapes the integrations API accepts for it. */
  accepts: readonly IntegrationCredentialsShape[];
  /** A refusal of client credentials says the mode needs none. */
  needsNoClient?: boolean;
}

/** The Provider fields that hold a mode's own options (the CRD's names; `modeOptions` is the generic one, JWT's). */
export type ModeOptionsField =
  'modeOptions' | 'basic' | 'twoStep' | 'appStore' | 'tba' | 'signature' | 'appInstallation' | 'pluginInstall' | 'mcp';

/**
 * A mode's options: one block of the Provider, in `field`, checked by the mode's schema (a failure is a
 * problem the Provider reconciler reports), shown by GET /providers as `shownAs` in snake_case.
 */
export interface ModeOptions {
  readonly field: ModeOptionsField;
  /** What the mode reads of the block. */
  readonly schema: z.ZodType;
  /** The block's name in GET /providers' answer. */
  readonly shownAs: string;
  /** The declared block as GET /providers shows it (absent fields left out). */
  view(block: Record<string, unknown>): Record<string, unknown>;
  /** The shown block's schema (REST schema, OpenAPI), optional and described. */
  readonly viewSchema: z.ZodType;
}

/**
 * A mode's credentials in the REST API (zod schemas, which the OpenAPI document is generated from):
 * `import`, the `credentials` POST /connections accepts (absent: the body cannot import the mode);
 * `shown`, the `credentials` of a connection's answer (absent: no answer documents them).
 */
/** A zod object schema of credentials, `type` the mode's name. */
export type CredentialsSchema = z.ZodObject<{ type: z.ZodLiteral<string> }>;

export interface CredentialSchemas {
  readonly import?: CredentialsSchema;
  readonly shown?: CredentialsSchema;
}

export interface AuthModeModule {
  readonly mode: AuthMode;
  readonly credentialSchemas: CredentialSchemas;
  /** POST /connections: the body's credentials as stored (a 400 naming the fields before anything is stored). */
  fromImport(deps: ModeDeps, input: ImportInput): Promise<Imported>;
  /** POST /connection (deprecated): the flat fields as stored; a 400 for fields the mode does not use. */
  fromFlatImport(deps: ModeDeps, input: FlatImportInput): Promise<StoredCredentials>;
  readonly connect: ConnectFlow;
  /** How its credentials are renewed; none: they are not. */
  readonly refresh?: RefreshStrategy;
  /** GET /connections/:id?refresh_github_app_jwt_token=true forces a refresh (app installation tokens). */
  readonly refreshOnAppJwtRequest?: boolean;
  readonly proxy: ProxyInjection;
  /** What the Provider reconciler reports missing from a Provider of this mode. */
  providerProblems(spec: ProviderSpec): string[];
  readonly integration: IntegrationNeeds;
  /** Its options block, if the mode has one. */
  readonly options?: ModeOptions;
}
