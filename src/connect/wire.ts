/**
 * The Connect UI's wire types: what the server's Connect API sends and what the page and the
 * frontend client post to each other. Shared by the server (src/connect) and the browser code
 * (src/browser); types only, so it compiles under both tsconfigs and emits nothing of substance.
 */

export interface FormField {
  name: string;
  label: string;
  secret: boolean;
  required: boolean;
}

export interface IntegrationView {
  id: string;
  name: string;
  provider: string;
  providerDisplayName: string;
  authMode: string;
  /** 'oauth': the browser goes to the provider (OAuth, app or plugin install); 'form': the end user types the credentials. */
  flow: 'oauth' | 'form';
  /** Credential fields of a form flow. */
  fields: FormField[];
  /** Connection configuration keys the end user fills in (before the redirect, or in the form). */
  configFields: FormField[];
  /** The Provider's logo (its `spec.logoUrl`), when it has one. */
  logoUrl?: string;
  /** Why this integration cannot be connected now (shown disabled with it); absent when it can. */
  unavailable?: string;
}

export interface SessionView {
  reconnect: boolean;
  integrations: IntegrationView[];
}

/** What the frontend is told after a success: connectionId only in development (spec, Authentication 4). */
export interface ConnectResult {
  providerConfigKey: string;
  connectionId?: string;
  operation: 'creation' | 'override';
}

/** Events the Connect UI reports to the application (postMessage), and the frontend client to onEvent. */
export type UiEvent =
  | { type: 'connect'; providerConfigKey: string; connectionId?: string }
  | { type: 'error'; error: { code: string; message: string }; providerConfigKey?: string }
  | { type: 'close' };

/** Settings of the embeddable page (`/connect/embed`), rendered into it as JSON. */
export interface EmbedSettings {
  /** Empty on the Nango-protocol page reached without a session token (then no origin may frame it). */
  namespace: string;
  allowedOrigins: string[];
  /** 'nango': the page speaks the protocol of Nango's frontend SDK (`openConnectUI`). */
  protocol?: 'nango';
}

/** Messages of Nango's frontend SDK protocol (`@nangohq/frontend` ConnectUI). */
export type NangoUiMessage =
  | { type: 'ready' }
  | { type: 'close' }
  | { type: 'connect'; payload: { providerConfigKey: string; connectionId?: string } }
  | { type: 'error'; payload: { errorType: string; errorMessage: string } };

/** An error answer of the Connect API, as the page reads it. */
export interface ApiErrorBody {
  error?: { code?: string; message?: string; errors?: Array<{ path?: string; message: string }> };
}
