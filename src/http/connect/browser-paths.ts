/**
 * The only paths an end user's browser needs: the Connect UI pages and scripts, the Connect UI's
 * session-token API, and the OAuth callback. The chart's Ingress routes exactly these (a test keeps
 * the two equal); everything else — the REST API with `POST /connect/sessions`, the proxy, /metrics —
 * stays on the internal Service.
 */
export interface BrowserPath {
  path: string;
  /** Ingress pathType: Exact matches the path alone; Prefix matches it and what lies below it. */
  pathType: 'Exact' | 'Prefix';
}

export const BROWSER_PATHS: readonly BrowserPath[] = [
  { path: '/connect', pathType: 'Exact' },
  // Nango's frontend SDK frames its baseURL with a "/" appended.
  { path: '/connect/', pathType: 'Exact' },
  { path: '/connect/embed', pathType: 'Exact' },
  { path: '/connect/redirect', pathType: 'Exact' },
  { path: '/connect/ui.js', pathType: 'Exact' },
  { path: '/connect/client.js', pathType: 'Exact' },
  { path: '/connect/client.d.ts', pathType: 'Exact' },
  { path: '/connect/api', pathType: 'Prefix' },
  // Shipped providers' logos (src/catalog/provider-logos.ts).
  { path: '/connect/logos', pathType: 'Prefix' },
  // MCP_OAUTH2 Integrations' Client ID Metadata Documents: authorization servers fetch them (src/connect/client-metadata.ts).
  { path: '/connect/clients', pathType: 'Prefix' },
  { path: '/oauth/callback', pathType: 'Exact' },
  // Providers' webhooks, one URL per Integration (src/http/provider-webhook-routes.ts); not a browser's, but public too.
  { path: '/webhooks', pathType: 'Prefix' },
];

/** Whether an Ingress path rule matches a request path (Kubernetes' rules: Prefix matches whole path elements). */
export function ingressMatches(rule: BrowserPath, requestPath: string): boolean {
  if (rule.pathType === 'Exact') return requestPath === rule.path;
  const prefix = rule.path.replace(/\/+$/, '');
  return requestPath === prefix || requestPath.startsWith(`${prefix}/`);
}
