/**
 * Shipped providers' logos as Latchkey serves them (`/connect/logos/<provider>.svg`): the icon in its
 * brand colour on a rounded tile, so the end user's browser asks no third party for it. The tile is
 * white unless the brand colour is too light to tell on white (under 3:1, WCAG's contrast for
 * graphics); then it is dark.
 */
import { PROVIDER_LOGOS } from './provider-logo-data.js';
import type { ProviderResource } from '../k8s/resources.js';
import { contrast } from '../domain/colour-contrast.js';

/** The path under the public base URL where a shipped provider's logo is served. */
export const LOGO_PATH_PREFIX = '/connect/logos/';

export function hasShippedLogo(provider: string): boolean {
  return Object.hasOwn(PROVIDER_LOGOS, provider);
}

/**
 * The logo a client shows for a Provider: its own `spec.logoUrl`, else the shipped one served by
 * Latchkey at `publicBaseUrl`, else none (the UI shows the initial).
 */
export function providerLogoUrl(p: ProviderResource, publicBaseUrl: string): string | undefined {
  if (p.spec.logoUrl) return p.spec.logoUrl;
  return hasShippedLogo(p.metadata.name) ? `${publicBaseUrl.replace(/\/+$/, '')}${LOGO_PATH_PREFIX}${p.metadata.name}.svg` : undefined;
}

const LIGHT_TILE = 'ffffff';
const DARK_TILE = '1b1f24';

/** The SVG of a shipped provider's logo (32×32), or undefined when it has none. */
export function providerLogoSvg(provider: string): string | undefined {
  if (!hasShippedLogo(provider)) return undefined;
  const logo = PROVIDER_LOGOS[provider]!;
  const tile = contrast(logo.hex.toLowerCase(), LIGHT_TILE) >= 3 ? LIGHT_TILE : DARK_TILE;
  // Only the generated table's values go in: slug-checked hex digits and simple-icons' path data.
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32">` +
    `<rect width="32" height="32" rx="7" fill="#${tile}"/>` +
    `<path transform="translate(5 5) scale(.9167)" fill="#${logo.hex}" d="${logo.path}"/></svg>`
  );
}
