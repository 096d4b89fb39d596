/**
 * Which application origins may embed the Connect UI in an iframe (an Environment's
 * `spec.connectUI.allowedOrigins`), as the Content-Security-Policy `frame-ancestors` of the framed
 * page and as the target origins of the framed page's postMessage events.
 */
import { primaryOf } from '../../k8s/primary-environment.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { CatalogStore } from '../../k8s/store.js';

/**
 * The same rule as the CRD's CEL validation: an https origin (or http on localhost / 127.0.0.1),
 * lower case, optional port, no path. Checked again here because the value goes into a header.
 */
const ORIGIN =
  /^(https:\/\/[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*|http:\/\/(localhost|127\.0\.0\.1))(:[0-9]{1,5})?$/;

export function isAllowedOriginValue(origin: string): boolean {
  return origin.length <= 253 && ORIGIN.test(origin);
}

/** The origins allowed to frame the Connect UI of a namespace's Environment (none without one). */
export function frameOrigins(catalog: CatalogStore, namespace: string): string[] {
  const environment = primaryOf(catalog.listEnvironments(namespace));
  const origins = environment?.spec.connectUI?.allowedOrigins ?? [];
  return [...new Set(origins.filter((o) => typeof o === 'string' && isAllowedOriginValue(o)))];
}

/**
 * Refuses a Nango-protocol page's embedders (the origin that framed or opened it and, where the
 * browser tells, the frames above that) unless the namespace's Environment lists each of them. The
 * answer says yes or no about the caller's own origins, never which origins are listed.
 */
export function assertEmbeddersAllowed(catalog: CatalogStore, namespace: string, embedders: readonly string[]): void {
  const allowed = new Set(frameOrigins(catalog, namespace));
  if (embedders.every((o) => allowed.has(o))) return;
  throw new LatchkeyError(
    'forbidden',
    'origin_not_allowed',
    "This application's origin may not show this Connect UI: the Environment's spec.connectUI.allowedOrigins does not list it.",
  );
}

/** The `frame-ancestors` source list: the origins, or `'none'` when there are none. */
export function frameAncestors(origins: readonly string[]): string {
  return origins.length ? origins.join(' ') : "'none'";
}
