/**
 * The Connect UI's CSP `img-src`: its own images, data: URLs, any https image (Providers' logos;
 * a Provider is the platform team's, and an image cannot run code), and the exact http origins of
 * logos on a loopback host (the only http logos the Provider CRD admits, for local use).
 */
import type { KubeStore } from '../../k8s/store.js';

const LOOPBACK_HTTP = /^http:\/\/(localhost|127\.0\.0\.1)(:[0-9]{1,5})?$/;

export function imageSources(store: KubeStore): string {
  const origins = new Set<string>();
  for (const provider of store.listProviders()) {
    const logo = provider.spec.logoUrl;
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
