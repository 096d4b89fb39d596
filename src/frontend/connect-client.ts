/**
 * Latchkey Connect frontend client: opens the Connect UI for a session token and reports what the
 * end user did. Served by Latchkey at `/connect/client.js` (an ES module without dependencies).
 *
 * ```js
 * import { openConnectUI } from 'https://latchkey.example.com/connect/client.js';
 * const ui = openConnectUI({
 *   baseUrl: 'https://latchkey.example.com',
 *   sessionToken, // from your backend (POST /connect/sessions)
 *   onEvent: (e) => { if (e.type === 'connect') console.log('connected', e.providerConfigKey); },
 * });
 * ```
 */

/** The authorization succeeded. `connectionId` is only present when the Environment is in development mode. */
export interface ConnectEvent {
  type: 'connect';
  providerConfigKey: string;
  connectionId?: string;
}
/** The UI was closed (by the end user, or by itself after a success). Always the last event. */
export interface CloseEvent {
  type: 'close';
}
/** The flow failed: denied consent, provider error, expired session, invalid input... */
export interface ErrorEvent {
  type: 'error';
  error: { code: string; message: string };
  providerConfigKey?: string;
}
export type ConnectUIEvent = ConnectEvent | CloseEvent | ErrorEvent;

export interface OpenConnectUIOptions {
  /** Latchkey's public base URL (its `LATCHKEY_PUBLIC_BASE_URL`). */
  baseUrl: string;
  /** A connect (or reconnect) session token from your backend. */
  sessionToken: string;
  onEvent: (event: ConnectUIEvent) => void;
  /** Popup size in pixels. */
  width?: number;
  height?: number;
}

export interface ConnectUI {
  /** Closes the popup (a `close` event follows). */
  close(): void;
}

const UI_SOURCE = 'latchkey-connect';
const CLIENT_SOURCE = 'latchkey-client';

/** A plain link to the Connect UI (for a new tab or an e-mail); no events are reported through it. */
export function connectLink(baseUrl: string, sessionToken: string): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/connect`);
  url.searchParams.set('session_token', sessionToken);
  return url.href;
}

/**
 * Opens the Connect UI in a popup. Call it from a click handler (browsers block popups otherwise).
 * The session token is handed to the popup by postMessage, addressed to Latchkey's origin only,
 * so it never appears in a URL.
 */
export function openConnectUI(options: OpenConnectUIOptions): ConnectUI {
  const base = options.baseUrl.replace(/\/+$/, '');
  const origin = new URL(base).origin;
  const width = options.width ?? 480;
  const height = options.height ?? 680;
  const left = Math.max(0, Math.round(window.screenX + (window.outerWidth - width) / 2));
  const top = Math.max(0, Math.round(window.screenY + (window.outerHeight - height) / 2));
  const popup = window.open(`${base}/connect`, 'latchkey-connect', `popup,width=${width},height=${height},left=${left},top=${top}`);
  let done = false;
  const emit = (event: ConnectUIEvent) => {
    try {
      options.onEvent(event);
    } catch (err) {
      setTimeout(() => { throw err; });
    }
  };
  if (!popup) {
    emit({ type: 'error', error: { code: 'popup_blocked', message: 'The browser blocked the Connect window; open it from a click.' } });
    emit({ type: 'close' });
    return { close() {} };
  }
  const finish = () => {
    if (done) return;
    done = true;
    window.removeEventListener('message', onMessage);
    clearInterval(poll);
    emit({ type: 'close' });
  };
  const onMessage = (event: MessageEvent) => {
    if (event.origin !== origin || event.source !== popup) return;
    const data = event.data as { source?: string; type?: string } & Record<string, unknown>;
    if (!data || data.source !== UI_SOURCE) return;
    if (data.type === 'ready') {
      popup.postMessage({ source: CLIENT_SOURCE, type: 'session', token: options.sessionToken }, origin);
    } else if (data.type === 'connect' && typeof data.providerConfigKey === 'string') {
      emit({
        type: 'connect',
        providerConfigKey: data.providerConfigKey,
        ...(typeof data.connectionId === 'string' ? { connectionId: data.connectionId } : {}),
      });
    } else if (data.type === 'error') {
      const error = data.error as { code?: unknown; message?: unknown } | undefined;
      emit({
        type: 'error',
        error: { code: String(error?.code ?? 'unknown'), message: String(error?.message ?? 'Unknown error') },
        ...(typeof data.providerConfigKey === 'string' ? { providerConfigKey: data.providerConfigKey } : {}),
      });
    }
  };
  window.addEventListener('message', onMessage);
  const poll = setInterval(() => {
    if (popup.closed) finish();
  }, 300);
  return {
    close() {
      if (!popup.closed) popup.close();
      finish();
    },
  };
}
