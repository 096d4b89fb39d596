/**
 * The browser-binding cookie of OAuth flows (docs/security.md, "The OAuth callback is bound to the
 * browser that started the flow"): HttpOnly, SameSite=Lax (sent on the provider's top-level redirect
 * back to the callback, not on cross-site subrequests), Secure and `__Host-` prefixed when the public
 * URL is https. One value per browser, reused by concurrent flows, so two tabs do not undo each other.
 */
import type { Request } from 'express';
import { isBrowserBinding } from '../../auth/flow-state.js';

export interface FlowCookie {
  name: string;
  /** Whether the browser reaches Latchkey over https (then the cookie is Secure). */
  secure: boolean;
}

export function flowCookie(publicBaseUrl: string): FlowCookie {
  const secure = new URL(publicBaseUrl).protocol === 'https:';
  return { name: secure ? '__Host-latchkey-flow' : 'latchkey-flow', secure };
}

/** The binding this request's browser holds, if any (a malformed value counts as none). */
export function readBinding(cookie: FlowCookie, req: Request): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== cookie.name) continue;
    const value = part.slice(eq + 1).trim();
    if (isBrowserBinding(value)) return value;
  }
  return undefined;
}

/** The Set-Cookie value; it lives as long as the session whose flows it binds. */
export function bindingCookieHeader(cookie: FlowCookie, binding: string, maxAgeSeconds: number): string {
  const attrs = [`${cookie.name}=${binding}`, 'Path=/', `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`, 'HttpOnly', 'SameSite=Lax'];
  if (cookie.secure) attrs.push('Secure');
  return attrs.join('; ');
}
