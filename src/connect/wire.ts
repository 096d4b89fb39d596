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
  /** The Provider's help (`spec.fieldHelp`), in the page's language where it has one. */
  description?: string;
  /** Shown as the placeholder. */
  example?: string;
  /** The provider's own page that says where to find the value. */
  docsUrl?: string;
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
  /** The Provider's logo (its `spec.logoUrl`, or the shipped one Latchkey serves), when it has one. */
  logoUrl?: string;
  /** Why this integration cannot be connected now (src/connect/session-view.ts leaves such integrations out); absent when it can. */
  unavailable?: string;
  /** What the row's subtitle says: the Provider's first category, in the page's language. */
  category?: string;
  /** The public certificate the end user's administrator registers with the provider before they connect (src/connect/certificate-view.ts). */
  certificate?: CertificateToRegister;
}

/**
 * A SAML bearer Provider's (RFC 7522) Integration certificate, shown read-only on the form: PEM, a file name to
 * download it as, and the Provider's help on where it is registered (`fieldHelp.certificate`).
 */
export interface CertificateToRegister {
  pem: string;
  fileName: string;
  description?: string;
  docsUrl?: string;
}

export interface SessionView {
  reconnect: boolean;
  /** The integrations the end user can connect (those that cannot work are left out: the operator sees them). */
  integrations: IntegrationView[];
  /** How many allowed integrations were left out because they cannot work now. */
  unavailableCount?: number;
  /** The application's name, logo and brand colour (the Environment's `spec.connectUI`). */
  branding?: Branding;
}

/** The application's look in the Connect UI; colours already adjusted for contrast, `#rrggbb`. */
export interface Branding {
  appName?: string;
  appLogoUrl?: string;
  /** Buttons' and links' colour on the light and the dark page, and the text on a button of that colour. */
  accent?: { light: string; onLight: string; dark: string; onDark: string };
}

/** The languages of the Connect UI's own text. */
export type UiLanguage = 'en' | 'fr' | 'de' | 'es' | 'pt';
export type UiTheme = 'light' | 'dark' | 'system';

/** The Connect UI's own text in one language; `{name}`-style placeholders are filled by the page. */
export interface UiText {
  loading: string;
  chooseTitle: string;
  chooseSubtitle: string;
  /** With the application's name: `{app}`. */
  chooseSubtitleApp: string;
  /** `{app}`, `{provider}`. */
  wantsAccess: string;
  search: string;
  searchLabel: string;
  noMatch: string;
  back: string;
  connectTitle: string;
  connect: string;
  continue: string;
  connecting: string;
  required: string;
  example: string;
  howToFind: string;
  opensNewTab: string;
  couldNotConnect: string;
  errorCode: string;
  tryAgain: string;
  connected: string;
  canClose: string;
  done: string;
  redirecting: string;
  opening: string;
  openingSignIn: string;
  finishSignIn: string;
  showWindow: string;
  cancel: string;
  windowClosed: string;
  continueWith: string;
  windowOpens: string;
  close: string;
  nothingToConnect: string;
  notReadyTitle: string;
  notReady: string;
  popupBlocked: string;
  networkError: string;
  somethingWrong: string;
  closeAndRetry: string;
  signIn: string;
  credentials: string;
  /** `{provider}`: the title of the account choice. */
  chooseAccountTitle: string;
  /** `{provider}`. */
  chooseAccountHelp: string;
  /** Beside a reconnect's current account. */
  currentAccount: string;
  /** Above the certificate an administrator registers with the provider. */
  certificateTitle: string;
  /** `{provider}`: what the end user does with it. */
  certificateLead: string;
  copy: string;
  copied: string;
  download: string;
}

/**
 * The accounts one grant covers, for the end user to choose one (`several: choose`): names and URLs as
 * the provider returns them, and a sealed handle of the choice the server holds (no token in it).
 */
export interface AccountChoiceView {
  choice: string;
  providerConfigKey: string;
  /** The integration's name as the end user knows it. */
  name: string;
  accounts: Array<{ value: string; label: string; url?: string }>;
  /** A reconnect: the connection's current account. */
  selected?: string;
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
  /** The namespace whose session tokens the page takes; empty on the Nango-protocol page when its address names none. */
  namespace: string;
  /**
   * The origins that may frame the page; empty on the Nango-protocol page reached without a session
   * token (any origin may frame it, and the server checks the origin with the token it sends).
   */
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
