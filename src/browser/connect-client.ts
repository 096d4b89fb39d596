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
 * // Or inside your page: openConnectUI({ ...same, mode: 'iframe', container: document.getElementById('connect') })
 * // (your page's origin must be listed in the Environment's spec.connectUI.allowedOrigins).
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
  /**
   * `'popup'` (default): a popup window; call it from a click handler, or the browser blocks it.
   * `'iframe'`: an iframe inside your page, in `container` or in a modal overlay. Your page's origin
   * (e.g. `https://app.example.com`) must be listed in the Environment's
   * `spec.connectUI.allowedOrigins`, or the browser refuses to show the frame (Content-Security-Policy
   * `frame-ancestors`) and no event arrives. OAuth providers refuse to be framed, so for them the
   * embedded UI opens the provider's sign-in page in a popup from the end user's click and reports
   * the result as usual.
   */
  mode?: 'popup' | 'iframe';
  /** iframe mode: the element the frame fills (give it a size). Without it a modal overlay is created. */
  container?: HTMLElement;
  /** Popup size, or the frame's size in the modal overlay, in pixels. */
  width?: number;
  height?: number;
  /** The UI's language (`en`, `fr`, `de`, `es`, `pt`); the browser's languages, then English, otherwise. */
  lang?: string;
  /** `'light'`, `'dark'` or `'system'` (the default: the end user's system setting). */
  theme?: 'light' | 'dark' | 'system';
}

/** `?lang=…&theme=…` for the Connect UI's address, or '' (the values are the server's to check). */
function lookQuery(options: OpenConnectUIOptions, first: '?' | '&'): string {
  const q = new URLSearchParams();
  if (options.lang) q.set('lang', options.lang);
  if (options.theme) q.set('theme', options.theme);
  const s = q.toString();
  return s ? `${first}${s}` : '';
}

export interface ConnectUI {
  /** Closes the popup or removes the frame (a `close` event follows). */
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

type Emit = (event: ConnectUIEvent) => void;

function emitter(options: OpenConnectUIOptions): Emit {
  return (event) => {
    try {
      options.onEvent(event);
    } catch (err) {
      setTimeout(() => {
        throw err;
      });
    }
  };
}

/** A message from the Connect UI window `from` (Latchkey's origin only), or undefined. */
function uiMessage(event: MessageEvent, origin: string, from: Window | null): ({ type?: string } & Record<string, unknown>) | undefined {
  if (event.origin !== origin || !from || event.source !== from) return undefined;
  const data = event.data as ({ source?: string; type?: string } & Record<string, unknown>) | null;
  return data && data.source === UI_SOURCE ? data : undefined;
}

/** Reports the UI's `connect` and `error` messages; true when the message was one of them. */
function relayResult(data: { type?: string } & Record<string, unknown>, emit: Emit): boolean {
  if (data.type === 'connect' && typeof data.providerConfigKey === 'string') {
    emit({
      type: 'connect',
      providerConfigKey: data.providerConfigKey,
      ...(typeof data.connectionId === 'string' ? { connectionId: data.connectionId } : {}),
    });
    return true;
  }
  if (data.type === 'error') {
    const error = data.error as { code?: unknown; message?: unknown } | undefined;
    emit({
      type: 'error',
      error: { code: String(error?.code ?? 'unknown'), message: String(error?.message ?? 'Unknown error') },
      ...(typeof data.providerConfigKey === 'string' ? { providerConfigKey: data.providerConfigKey } : {}),
    });
    return true;
  }
  return false;
}

/**
 * Opens the Connect UI, in a popup (default) or an iframe (`mode: 'iframe'`). Either way the
 * session token is handed over by postMessage, addressed to Latchkey's origin only, so it never
 * appears in a URL; messages are accepted from that window and origin only.
 */
export function openConnectUI(options: OpenConnectUIOptions): ConnectUI {
  return options.mode === 'iframe' ? openFrame(options) : openPopup(options);
}

function openPopup(options: OpenConnectUIOptions): ConnectUI {
  const base = options.baseUrl.replace(/\/+$/, '');
  const origin = new URL(base).origin;
  const width = options.width ?? 480;
  const height = options.height ?? 680;
  const left = Math.max(0, Math.round(window.screenX + (window.outerWidth - width) / 2));
  const top = Math.max(0, Math.round(window.screenY + (window.outerHeight - height) / 2));
  const popup = window.open(
    `${base}/connect${lookQuery(options, '?')}`,
    'latchkey-connect',
    `popup,width=${width},height=${height},left=${left},top=${top}`,
  );
  let done = false;
  const emit = emitter(options);
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
    const data = uiMessage(event, origin, popup);
    if (!data) return;
    if (data.type === 'ready') popup.postMessage({ source: CLIENT_SOURCE, type: 'session', token: options.sessionToken }, origin);
    else relayResult(data, emit);
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

/** The namespace part of a session token (which Environment's page to frame); not a secret. */
function tokenNamespace(token: string): string | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const ns = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
    return /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns) ? ns : undefined;
  } catch {
    return undefined;
  }
}

function openFrame(options: OpenConnectUIOptions): ConnectUI {
  const base = options.baseUrl.replace(/\/+$/, '');
  const origin = new URL(base).origin;
  const emit = emitter(options);
  const namespace = tokenNamespace(options.sessionToken);
  if (!namespace) {
    emit({ type: 'error', error: { code: 'invalid_session', message: 'This is not a Latchkey connect session token.' } });
    emit({ type: 'close' });
    return { close() {} };
  }
  const frame = document.createElement('iframe');
  frame.src = `${base}/connect/embed?namespace=${encodeURIComponent(namespace)}${lookQuery(options, '&')}`;
  frame.title = 'Connect an account';
  frame.setAttribute('data-latchkey-connect', '');
  let overlay: HTMLElement | undefined;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    window.removeEventListener('message', onMessage);
    document.removeEventListener('keydown', onKey);
    (overlay ?? frame).remove();
    emit({ type: 'close' });
  };
  const onMessage = (event: MessageEvent) => {
    const data = uiMessage(event, origin, frame.contentWindow);
    if (!data) return;
    if (data.type === 'ready')
      frame.contentWindow!.postMessage({ source: CLIENT_SOURCE, type: 'session', token: options.sessionToken }, origin);
    else if (data.type === 'close') finish();
    else relayResult(data, emit);
  };
  const onKey = (event: KeyboardEvent) => {
    if (overlay && event.key === 'Escape') finish();
  };
  window.addEventListener('message', onMessage);
  if (options.container) {
    frame.style.cssText = 'display:block;width:100%;height:100%;border:0;';
    options.container.append(frame);
  } else {
    const width = options.width ?? 480;
    const height = options.height ?? 680;
    overlay = document.createElement('div');
    overlay.setAttribute('data-latchkey-overlay', '');
    overlay.style.cssText =
      'position:fixed;inset:0;z-index:2147483000;display:flex;align-items:center;justify-content:center;background:rgba(15,23,42,.45);';
    frame.style.cssText = `display:block;width:min(${width}px,calc(100vw - 32px));height:min(${height}px,calc(100vh - 32px));border:0;border-radius:12px;background:#f5f6f8;box-shadow:0 10px 40px rgba(0,0,0,.25);`;
    overlay.addEventListener('click', (event) => {
      if (event.target === overlay) finish();
    });
    document.addEventListener('keydown', onKey);
    overlay.append(frame);
    document.body.append(overlay);
  }
  return { close: finish };
}
