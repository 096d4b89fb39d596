/**
 * The Connect UI's CSP `img-src`: its own images (the shipped providers' logos), data: URLs, any
 * https image (Providers' and applications' logos; a Provider and an Environment are the platform
 * team's, and an image cannot run code), and the exact http origins of such logos on a loopback host
 * (the only http logos the Provider and Environment CRDs admit, for local use).
 */
import type { CatalogStore } from '../../k8s/store.js';

const LOOPBACK_HTTP = /^http:\/\/(localhost|127\.0\.0\.1)(:[0-9]{1,5})?$/;

export function imageSources(catalog: CatalogStore): string {
  const origins = new Set<string>();
  const logos = [
    ...catalog.listProviders().map((p) => p.spec.logoUrl),
    ...catalog.listEnvironments().map((e) => e.spec.connectUI?.appLogoUrl),
  ];
  for (const logo of logos) {
    if (!logo?.startsWith('http://')) continue;
    try {
      const origin = new URL(logo).origin;
      if (LOOPBACK_HTTP.test(origin)) origins.add(origin);
    } catch {
      // Not a URL: the CRD refuses it; nothing to allow.
    }
  }
  return ["'self'", 'data:', 'https:', ...[...origins].sort()].join(' ');
}
