/**
 * Shipped providers' logos (src/catalog/provider-logos.ts, data generated from simple-icons): the
 * generated table is what the extraction makes from the catalog and the installed simple-icons (so
 * it is neither stale nor edited by hand, and names no icon the exact-match rule does not; a variant such
 * as `okta-api-key` has its provider's logo), and the served SVG is the icon on a tile that keeps the
 * brand colour visible.
 */
import { readFileSync } from 'node:fs';
import * as prettier from 'prettier';
import { LOGO_DATA_FILE, logoDataSource, shippedProviders } from '../../dev/logos/extract-provider-logos.js';
import { baseName, providerIcons } from '../../dev/logos/provider-icons.js';
import { PROVIDER_LOGOS } from '../../src/catalog/provider-logo-data.js';
import { hasShippedLogo, providerLogoSvg } from '../../src/catalog/provider-logos.js';
import { contrast } from '../../src/domain/colour-contrast.js';

/** The logo slug each of `providers` gets, by provider name (only those that get one). */
const slugsOf = (providers: Parameters<typeof providerIcons>[0]) => providerIcons(providers).map((i) => [i.provider, i.slug]);

describe('shipped provider logos', () => {
  it('are exactly what the extraction makes from the catalog and simple-icons (run `npm run logos` when this fails)', async () => {
    const options = (await prettier.resolveConfig(LOGO_DATA_FILE)) ?? {};
    const expected = await prettier.format(logoDataSource(), { ...options, filepath: LOGO_DATA_FILE });
    expect(readFileSync(LOGO_DATA_FILE, 'utf8')).toBe(expected);
  });

  it('match a provider only by its name or its display name, never a guess', () => {
    const slugs = slugsOf([
      { name: 'github', displayName: 'Something else' },
      { name: 'acme-crm', displayName: 'GitLab' },
      { name: 'open-ai-like', displayName: 'OpenAI-ish' },
    ]);
    expect(slugs).toEqual([
      ['acme-crm', 'gitlab'],
      ['github', 'github'],
    ]);
    // Every generated entry is a shipped provider.
    const shipped = new Set(shippedProviders().map((p) => p.name));
    expect(Object.keys(PROVIDER_LOGOS).filter((n) => !shipped.has(n))).toEqual([]);
    expect(Object.keys(PROVIDER_LOGOS).length).toBeGreaterThan(150);
  });

  it("give a variant named by the catalog's naming rule its provider's logo, as the plain name has it", () => {
    const slugs = slugsOf([
      { name: 'okta-api-key', displayName: 'Okta (API token)' },
      { name: 'paypal-sandbox-cc', displayName: 'Something else' },
      // Only the naming rule's mode words are taken off: no icon is guessed from another suffix or a prefix.
      { name: 'github-like', displayName: 'Something else' },
      { name: 'acme-basic', displayName: 'Acme (Basic auth)' },
    ]);
    expect(slugs).toEqual([
      ['okta-api-key', 'okta'],
      ['paypal-sandbox-cc', 'paypal'],
    ]);
    expect(baseName('paypal-sandbox-cc')).toBe('paypal');
    expect(baseName('okta')).toBe('okta');
    // The shipped table: the plain names (the common catalog's modes) and their renamed variants alike.
    for (const [plain, variant] of [
      ['okta', 'okta-api-key'],
      ['datadog', 'datadog-basic'],
      ['snowflake', 'snowflake-jwt'],
      ['greenhouse', 'greenhouse-basic'],
      ['stripe', 'stripe-api-key'],
    ]) {
      expect([variant, PROVIDER_LOGOS[variant]?.slug]).toEqual([variant, PROVIDER_LOGOS[plain]!.slug]);
      expect(providerLogoSvg(variant)).toBe(providerLogoSvg(plain));
    }
  });

  it('serve the icon in its brand colour on a tile it stands out from', () => {
    const svg = providerLogoSvg('github')!;
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain(`d="${PROVIDER_LOGOS.github!.path}"`);
    expect(svg).not.toMatch(/<script|on\w+=|href/i);
    for (const [name, logo] of Object.entries(PROVIDER_LOGOS)) {
      const tile = /<rect[^>]+fill="#([0-9a-f]{6})"/.exec(providerLogoSvg(name)!)![1]!;
      // A light brand colour (under 3:1 on white) gets the dark tile, where it shows better.
      if (contrast(logo.hex.toLowerCase(), 'ffffff') < 3) expect(tile).toBe('1b1f24');
      else expect(tile).toBe('ffffff');
    }
    expect(hasShippedLogo('openai')).toBe(false);
    expect(providerLogoSvg('openai')).toBeUndefined();
    expect(hasShippedLogo('__proto__')).toBe(false);
  });
});
