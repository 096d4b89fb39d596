/** The public URL a provider sends an Integration's webhooks to (src/http/provider-webhook-routes.ts serves it). */
export function providerWebhookUrl(publicBaseUrl: string, namespace: string, integration: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/webhooks/${encodeURIComponent(namespace)}/${encodeURIComponent(integration)}`;
}
