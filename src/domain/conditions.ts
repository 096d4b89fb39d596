/**
 * The status conditions of Latchkey's custom resources: their types and reasons, per kind, each with
 * the one component that owns it (sets and clears it; nothing else writes it), and the one helper that
 * sets conditions in the Kubernetes manner.
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A condition as stored in `status.conditions` (read back, so type and reason are any string). */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** What a component decides about one condition; `setConditions` adds the time and generation. */
export interface ConditionInput<Type extends string = string, Reason extends string = string> {
  type: Type;
  status: ConditionStatus;
  reason: Reason;
  message: string;
}

/** A decision about a condition whose type is known from the context (the kind's `Ready`). */
export type Verdict<Reason extends string = string> = Omit<ConditionInput<string, Reason>, 'type'>;

type ValueOf<T> = T[keyof T];

/** Reasons of a referenced Secret that is missing from the watch cache (Integrations and Environments). */
export const SecretReason = {
  /** The Secret does not exist. */
  SecretNotFound: 'SecretNotFound',
  /** The Secret exists without the `latchkey.dev/watch=true` label, so Latchkey cannot see it. */
  SecretNotWatched: 'SecretNotWatched',
} as const;
export type SecretReason = ValueOf<typeof SecretReason>;

/** Condition types of a Provider. */
export const ProviderCondition = {
  /** The Provider's spec is valid. Owner: the Provider reconciler (controller/reconcilers/provider.ts). */
  Ready: 'Ready',
} as const;
export const ProviderReason = {
  Valid: 'Valid',
  InvalidSpec: 'InvalidSpec',
} as const;
export type ProviderReason = ValueOf<typeof ProviderReason>;

/** Condition types of an Integration. */
export const IntegrationCondition = {
  /**
   * Its Provider exists and is valid, and its client Secret is visible and holds what the auth mode
   * needs. Owner: the Integration reconciler (controller/reconcilers/integration.ts).
   */
  Ready: 'Ready',
  /**
   * The provider keeps answering refreshes with tokens that live shorter than the refresh floor
   * (src/domain/refresh-floor.ts): they are refreshed once per floor and may be used expired. Present
   * once it was True. Owner: the Integration reconciler, from the `latchkey.dev/short-lived-tokens`
   * annotation the refresh scheduler writes (src/controller/short-lived-tokens.ts). Not the end
   * users' fault: nothing is recorded on the connections.
   */
  ProviderTokensShortLived: 'ProviderTokensShortLived',
} as const;
export const IntegrationReason = {
  Ready: 'Ready',
  ProviderNotFound: 'ProviderNotFound',
  ProviderNotReady: 'ProviderNotReady',
  ClientSecretRefMissing: 'ClientSecretRefMissing',
  SecretKeyMissing: 'SecretKeyMissing',
  InvalidPrivateKey: 'InvalidPrivateKey',
  /** The Provider requires a TLS client certificate and spec.clientCertificateRef names none. */
  ClientCertificateRefMissing: 'ClientCertificateRefMissing',
  /** The clientCertificateRef Secret lacks tls.crt or tls.key, or they are not a matching, current certificate and key. */
  InvalidClientCertificate: 'InvalidClientCertificate',
  /**
   * A value the Provider needs of the Integration is not set: `redirectUriName` (`redirectUriIsName`), a key of
   * `authorizationParams` (`requiredAuthorizationParams`).
   */
  IntegrationValueMissing: 'IntegrationValueMissing',
  /** A SAML bearer Integration's `certificate` is not a PEM certificate, not its `privateKey`'s, or not current. */
  InvalidSigningCertificate: 'InvalidSigningCertificate',
  /** The token endpoint refused the client (invalid_client, unauthorized_client, a 4xx page): reported by the refresher. */
  ClientRejected: 'ClientRejected',
  /** A configuration key the Provider lets the Integration set (setBy: integration) is required and spec.connectionConfig lacks it. */
  ConnectionConfigMissing: 'ConnectionConfigMissing',
  /** A value of spec.connectionConfig breaks its key's rule, or names a key the Provider does not let the Integration set. */
  InvalidConnectionConfig: 'InvalidConnectionConfig',
  ...SecretReason,
} as const;
export type IntegrationReason = ValueOf<typeof IntegrationReason>;

/** Reasons of ProviderTokensShortLived. */
export const TokenLifetimeReason = {
  /** True: refreshes in a row answered tokens shorter than the floor. */
  ShortLivedTokens: 'ShortLivedTokens',
  /** False: a refresh answered a token that lives at least the floor again. */
  NormalLifetimes: 'NormalLifetimes',
} as const;
export type TokenLifetimeReason = ValueOf<typeof TokenLifetimeReason>;

/** Condition types of an Environment. */
export const EnvironmentCondition = {
  /**
   * It is its namespace's Environment, its Secret holds the secret key, and its URLs are http(s).
   * Owner: the Environment reconciler (controller/reconcilers/environment.ts).
   */
  Ready: 'Ready',
} as const;
export const EnvironmentReason = {
  Ready: 'Ready',
  DuplicateEnvironment: 'DuplicateEnvironment',
  SecretKeyMissing: 'SecretKeyMissing',
  /** The secret key cannot hold 128 bits (auth/secret-key-strength.ts); it is refused. */
  WeakSecretKey: 'WeakSecretKey',
  /** Another namespace's Environment holds the same secret key; it is refused in both. */
  SecretKeyShared: 'SecretKeyShared',
  InvalidURL: 'InvalidURL',
  /** The egress guard refuses the webhook URL's address (private, loopback, metadata…; src/egress). */
  WebhookURLRefused: 'WebhookURLRefused',
  ...SecretReason,
} as const;
export type EnvironmentReason = ValueOf<typeof EnvironmentReason>;

/**
 * Condition types of a Connection. Owner of all four: the connection reconciler
 * (controller/reconcilers/connection.ts). The refresh scheduler and the refresher record what happened
 * (status.refreshAttempts, status.errors, the re-authorization annotation) and the reconciler derives
 * the conditions from that, so a Connection's conditions have one writer.
 */
export const ConnectionCondition = {
  /** Its Integration and the Integration's Provider exist and are valid. */
  IntegrationReady: 'IntegrationReady',
  /** Its credentials Secret exists, matches the auth mode, and the provider has not refused it. */
  CredentialsValid: 'CredentialsValid',
  /** The provider refused these credentials for good; lifted when new credentials are stored. */
  NeedsReauthorization: 'NeedsReauthorization',
  /** Usable now: True, or False with the reason that needs attention first. */
  Ready: 'Ready',
} as const;
export type ConnectionCondition = ValueOf<typeof ConnectionCondition>;

export const ConnectionReason = {
  // IntegrationReady (and Ready while it is False)
  IntegrationReady: 'IntegrationReady',
  IntegrationNotFound: 'IntegrationNotFound',
  ProviderNotFound: 'ProviderNotFound',
  IntegrationNotReady: 'IntegrationNotReady',
  // CredentialsValid (and Ready while it is False)
  CredentialsPresent: 'CredentialsPresent',
  CredentialsMissing: 'CredentialsMissing',
  CredentialsTypeMismatch: 'CredentialsTypeMismatch',
  // NeedsReauthorization (True), and CredentialsValid and Ready while it is True
  ReauthorizationRequired: 'ReauthorizationRequired',
  // NeedsReauthorization (False): never refused, or refused and then replaced
  CredentialsAccepted: 'CredentialsAccepted',
  Reauthorized: 'Reauthorized',
  // Ready
  RefreshFailing: 'RefreshFailing',
  TokenExpired: 'TokenExpired',
  Ready: 'Ready',
} as const;
export type ConnectionReason = ValueOf<typeof ConnectionReason>;

/**
 * Condition types of a CredentialBinding. Owner of both: the binding reconciler
 * (controller/reconcilers/credential-binding.ts), run by the controller replica that owns the bound
 * connection.
 */
export const CredentialBindingCondition = {
  /** The Secret holds what it should now: the current token, or nothing (a refused binding, a connection gone). */
  Synced: 'Synced',
  /** The Secret holds a usable token: True, or False with the reason. */
  Ready: 'Ready',
} as const;
export const CredentialBindingReason = {
  /** Synced and Ready: the Secret holds the current token. */
  Synced: 'Synced',
  /** Not decided yet: the connection exists but is not in the owning replica's cache yet. */
  Pending: 'Pending',
  /** The connection's namespace has no Environment. */
  EnvironmentNotFound: 'EnvironmentNotFound',
  /** The Environment does not allow this namespace (spec.credentialBindings.namespaceSelector); nothing is written. */
  NotAllowed: 'NotAllowed',
  /** The connection does not exist (or was deleted): the Secret's values were emptied. */
  ConnectionNotFound: 'ConnectionNotFound',
  /** The provider refused the connection's grant (revoked): the Secret's values were emptied. */
  ReauthorizationRequired: 'ReauthorizationRequired',
  /** The connection's auth mode holds no access token (API_KEY, BASIC, …): nothing is written. */
  NoAccessToken: 'NoAccessToken',
  /** The template names a value the connection lacks (a missing connectionConfig key, no base URL). */
  TemplateInvalid: 'TemplateInvalid',
  /** A Secret of the target name exists and is not this binding's. */
  SecretNotOwned: 'SecretNotOwned',
  /** The token was due and its refresh failed; the Secret keeps the last token until it expires. */
  RefreshFailing: 'RefreshFailing',
  /** The token in the Secret has expired. */
  TokenExpired: 'TokenExpired',
  /** The Secret was written but a rollout restart target could not be patched (retried). */
  RolloutRestartFailed: 'RolloutRestartFailed',
} as const;
export type CredentialBindingReason = ValueOf<typeof CredentialBindingReason>;

/**
 * Sets conditions in the Kubernetes manner: `lastTransitionTime` moves only when the status changes,
 * every condition carries the generation it was computed from, and the order is stable.
 */
export function setConditions(
  existing: Condition[] | undefined,
  updates: ConditionInput[],
  generation: number | undefined,
  now: number,
): Condition[] {
  const out = [...(existing ?? [])];
  for (const update of updates) {
    const i = out.findIndex((c) => c.type === update.type);
    const previous = i >= 0 ? out[i] : undefined;
    const next: Condition = {
      type: update.type,
      status: update.status,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      lastTransitionTime: previous && previous.status === update.status ? previous.lastTransitionTime : toSeconds(now),
      reason: update.reason,
      message: update.message.slice(0, 32_000),
    };
    if (i >= 0) out[i] = next;
    else out.push(next);
  }
  return out;
}

/** RFC 3339 to the second, as Kubernetes writes its own (metav1.Time): 4 bytes less per condition stored. */
const toSeconds = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
