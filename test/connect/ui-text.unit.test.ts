/**
 * The Connect UI's own text and language choice (src/connect/ui-text.ts), and the branding a session
 * shows (src/connect/session-view.ts): the SDK's `lang`, then Accept-Language by q-value, then
 * English; every language has every string with the same placeholders; Latchkey's own labels are
 * translated, a Provider's are not; the brand colour is adjusted to AA on both themes' cards.
 */
import { brandingOf, CARD_BACKGROUND } from '../../src/connect/session-view.js';
import type { OpenSession } from '../../src/connect/session.js';
import {
  categoryLabel,
  defaultFieldLabel,
  errorMessage,
  errorTexts,
  fill,
  pickLanguage,
  uiText,
  UI_LANGUAGES,
} from '../../src/connect/ui-text.js';
import { contrast } from '../../src/domain/colour-contrast.js';

describe('the Connect UI language', () => {
  it.each([
    ['fr', 'de-DE,de;q=0.9', 'fr'],
    ['pt-BR', undefined, 'pt'],
    ['ES', undefined, 'es'],
    [undefined, 'de-CH,de;q=0.9,en;q=0.8', 'de'],
    [undefined, 'ja,fr;q=0.5,es;q=0.8', 'es'],
    [undefined, 'fr;q=0,de;q=0.1', 'de'],
    ['xx', 'ja', 'en'],
    [undefined, undefined, 'en'],
    [undefined, ';;;,q=abc,*', 'en'],
  ])('lang %s with Accept-Language %s is %s', (lang, accept, expected) => {
    expect(pickLanguage(lang, accept)).toBe(expected);
  });

  it('has every string in every language, with the English placeholders', () => {
    const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    const en = uiText('en');
    for (const lang of UI_LANGUAGES) {
      const t = uiText(lang);
      expect(Object.keys(t).sort()).toEqual(Object.keys(en).sort());
      for (const key of Object.keys(en) as Array<keyof typeof en>) {
        expect(t[key].trim()).not.toBe('');
        expect([lang, key, placeholders(t[key])]).toEqual([lang, key, placeholders(en[key])]);
      }
    }
    expect(fill(uiText('fr').wantsAccess, { app: 'Acme', provider: 'Salesforce' })).toBe('Acme demande l’accès à votre compte Salesforce.');
  });

  it('translates the same end-user error codes in every language, and keeps the server’s message in English or for other codes', () => {
    const codes = Object.keys(errorTexts('fr')).sort();
    for (const lang of ['de', 'es', 'pt'] as const) expect(Object.keys(errorTexts(lang)).sort()).toEqual(codes);
    expect(errorMessage('fr', 'session_expired', 'The connect session has expired.')).toContain('a expiré');
    expect(errorMessage('en', 'session_expired', 'The connect session has expired.')).toBe('The connect session has expired.');
    expect(errorMessage('de', 'some_new_code', 'Server says so.')).toBe('Server says so.');
    expect(errorMessage('de', 'constructor', 'Server says so.')).toBe('Server says so.');
  });

  it('translates categories it knows and Latchkey’s own field labels, never a Provider’s label', () => {
    expect(categoryLabel('dev-tools', 'de')).toBe('Entwicklerwerkzeuge');
    expect(categoryLabel('knowledge-base', 'fr')).toBe('Knowledge base');
    expect(categoryLabel('__proto__', 'fr')).toBe('__proto__');
    expect(defaultFieldLabel('apiKey', 'API key', 'fr')).toBe('Clé API');
    expect(defaultFieldLabel('apiKey', 'Personal access key', 'fr')).toBe('Personal access key');
    expect(defaultFieldLabel('subdomain', 'subdomain', 'fr')).toBe('subdomain');
  });
});

describe('branding', () => {
  const session = (connectUI: Record<string, string> | undefined) =>
    ({
      environment: { metadata: { name: 'e' }, spec: { secretRef: { name: 's' }, ...(connectUI ? { connectUI } : {}) } },
    }) as unknown as OpenSession;

  it('is absent without settings, and ignores a colour that is not #RRGGBB', () => {
    expect(brandingOf(session(undefined))).toBeUndefined();
    expect(brandingOf(session({ brandColor: 'red' }))).toBeUndefined();
  });

  it('keeps a readable brand colour and adjusts one that is not, on both themes', () => {
    const kept = brandingOf(session({ brandColor: '#3553D1', appName: 'Acme' }))!;
    expect(kept.appName).toBe('Acme');
    expect(kept.accent!.light).toBe('#3553d1');
    for (const colour of ['#ffd600', '#101010', '#3553d1', '#00b388']) {
      const { accent } = brandingOf(session({ brandColor: colour }))!;
      for (const [c, on, card] of [
        [accent!.light, accent!.onLight, CARD_BACKGROUND.light],
        [accent!.dark, accent!.onDark, CARD_BACKGROUND.dark],
      ] as const) {
        expect(contrast(c.slice(1), card)).toBeGreaterThanOrEqual(4.5);
        expect(contrast(on.slice(1), c.slice(1))).toBeGreaterThanOrEqual(4.5);
      }
    }
  });
});
