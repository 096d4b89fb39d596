/**
 * The language and theme a Connect UI page is rendered in: `?lang=` and `?theme=` (as Nango's SDK and
 * ours send them), else the look cookie the page set when it sent the browser to the provider (so
 * the OAuth callback's page keeps the end user's language and theme), else Accept-Language and the
 * system theme. Values we do not have are ignored. The cookie holds only these two words.
 */
import type { Request } from 'express';
import { pickLanguage, UI_LANGUAGES } from '../../connect/ui-text.js';
import type { UiLanguage, UiTheme } from '../../connect/wire.js';
import type { Look } from './pages.js';

const THEMES: readonly UiTheme[] = ['light', 'dark', 'system'];
const COOKIE_VALUE = /^([a-z]{2})\.([a-z]{4,6})$/;

export function lookCookieName(publicBaseUrl: string): string {
  return new URL(publicBaseUrl).protocol === 'https:' ? '__Host-latchkey-look' : 'latchkey-look';
}

function fromCookie(req: Request, name: string): { lang?: UiLanguage; theme?: UiTheme } {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const m = COOKIE_VALUE.exec(part.slice(eq + 1).trim());
    return {
      lang: UI_LANGUAGES.find((l) => l === m?.[1]),
      theme: THEMES.find((t) => t === m?.[2]),
    };
  }
  return {};
}

export function lookOf(req: Request, cookieName: string): Look {
  const saved = fromCookie(req, cookieName);
  const asked = typeof req.query.lang === 'string' ? req.query.lang.slice(0, 16) : undefined;
  const theme = THEMES.find((t) => t === req.query.theme) ?? saved.theme ?? 'system';
  return { lang: pickLanguage(asked ?? saved.lang, req.headers['accept-language']), theme };
}

/** Set where a flow leaves for the provider; read by the callback's page. An hour is longer than any sign-in. */
export function lookCookieHeader(look: Look, publicBaseUrl: string): string {
  const attrs = [`${lookCookieName(publicBaseUrl)}=${look.lang}.${look.theme}`, 'Path=/', 'Max-Age=3600', 'HttpOnly', 'SameSite=Lax'];
  if (new URL(publicBaseUrl).protocol === 'https:') attrs.push('Secure');
  return attrs.join('; ');
}
