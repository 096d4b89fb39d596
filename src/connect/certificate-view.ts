/**
 * The certificate a SAML bearer Provider's (RFC 7522) end user must have registered before connecting: the
 * Integration signs each assertion with its `privateKey`, and the provider accepts it only once the end user's
 * administrator has registered that key's certificate (SuccessFactors: Manage OAuth2 Client Applications, which
 * then shows the API key the end user types). The Connect form shows the Integration's `certificate`, which is
 * public; only the certificate itself, re-encoded from its parse, ever leaves (never the Secret's other keys).
 */
import { publicCertificatePem, SIGNING_KEYS } from '../domain/signing-certificate.js';
import type { CatalogStore } from '../k8s/catalog-store.js';
import type { ProviderResource } from '../k8s/resources.js';
import type { CertificateToRegister, UiLanguage } from './wire.js';

export function certificateToRegister(
  catalog: Pick<CatalogStore, 'getIntegration' | 'readSecretValue'>,
  namespace: string,
  integrationId: string,
  provider: ProviderResource,
  lang: UiLanguage,
): CertificateToRegister | undefined {
  if (provider.spec.modeOptions?.samlBearer === undefined) return undefined;
  const secretName = catalog.getIntegration(namespace, integrationId)?.spec.clientSecretRef?.name;
  const pem = secretName ? publicCertificatePem(catalog.readSecretValue(namespace, secretName, SIGNING_KEYS.cert)) : undefined;
  if (!pem) return undefined;
  const help = Object.hasOwn(provider.spec.fieldHelp ?? {}, 'certificate') ? provider.spec.fieldHelp!.certificate : undefined;
  const description = help?.descriptions?.[lang] ?? help?.description;
  return {
    pem,
    fileName: `${integrationId}.crt`,
    ...(description ? { description } : {}),
    ...(help?.docsUrl?.startsWith('https://') ? { docsUrl: help.docsUrl } : {}),
  };
}
