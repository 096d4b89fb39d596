/**
 * Which application origins may embed the Connect UI in an iframe (an Environment's
 * `spec.connectUI.allowedOrigins`), as the Content-Security-Policy `frame-ancestors` of the framed
 * page and as the target origins of the framed page's postMessage events.
 */
import { primaryOf } from '../../auth/environment-keys.js';
import type { KubeStore } from '../../k8s/store.js';

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
export function frameOrigins(store: KubeStore, namespace: string): string[] {
  const environment = primaryOf(store.listEnvironments(namespace));
  const origins = environment?.spec.connectUI?.allowedOrigins ?? [];
  return [...new Set(origins.filter((o) => typeof o === 'string' && isAllowedOriginValue(o)))];
}

/** The `frame-ancestors` source list: the origins, or `'none'` when there are none. */
export function frameAncestors(origins: readonly string[]): string {
  return origins.length ? origins.join(' ') : "'none'";
}
