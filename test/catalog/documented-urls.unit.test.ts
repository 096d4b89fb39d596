/**
 * Every URL a catalog Provider declares beside its base (the `verification` path, each `postConnection`
 * step's URL, the `revocation` URL) resolves, as the product resolves it, to the full URL the provider's
 * docs give, written next to it in the manifest as `documentedUrl`. A base URL that changes (a version
 * path moved into or out of `proxy.baseUrl`) then fails here instead of silently sending typed keys,
 * tokens or revocations to paths that do not exist.
 */
import { verificationUrl } from '../../src/modes/shared/credential-check.js';
import { revocationRequest } from '../../src/auth/grant-revocation.js';
import { providerUrlTemplate } from '../../src/catalog/connection-config.js';
import type { ProviderResource } from '../../src/k8s/resources.js';
import { readCatalog, type ProviderManifest } from '../support/catalog-files.js';

interface Declared {
  provider: string;
  where: string;
  url: string;
  documentedUrl: string | undefined;
  manifest: ProviderManifest;
}

function declaredUrls(manifests: ProviderManifest[]): Declared[] {
  const out: Declared[] = [];
  for (const m of manifests) {
    const s = m.spec;
    const at = (where: string, url: string, documentedUrl: string | undefined) =>
      out.push({ provider: m.metadata.name, where, url, documentedUrl, manifest: m });
    if (s.verification) at('verification.path', s.verification.path, s.verification.documentedUrl);
    for (const step of s.postConnection?.steps ?? []) at(`postConnection.steps.${step.name}.url`, step.url, step.documentedUrl);
    if (s.revocation) at('revocation.url', s.revocation.url, s.revocation.documentedUrl);
  }
  return out;
}

const catalog = readCatalog().filter((m) => m?.kind === 'Provider');
const declared = declaredUrls(catalog);
const hasPlaceholder = (url: string) => url.includes('${');
const asResource = (m: ProviderManifest): ProviderResource => ({ metadata: { name: m.metadata.name }, spec: m.spec });

describe('URLs beside the base, against the documented URL', () => {
  it('covers every verification, post-connection step and revocation of the catalog', () => {
    // The counts of the catalog when this test was written: fewer means blocks were lost, not moved.
    expect(declared.filter((d) => d.where === 'verification.path').length).toBeGreaterThanOrEqual(20);
    expect(declared.filter((d) => d.where.startsWith('postConnection')).length).toBeGreaterThanOrEqual(10);
    expect(declared.filter((d) => d.where === 'revocation.url').length).toBeGreaterThanOrEqual(9);
    expect(declared.filter((d) => !d.documentedUrl).map((d) => `${d.provider} ${d.where}`)).toEqual([]);
  });

  it('resolves each against its base exactly as the product does, to its documentedUrl', () => {
    const wrong = declared
      .map((d) => ({ d, resolved: providerUrlTemplate(d.manifest.spec, d.url) }))
      .filter(({ d, resolved }) => resolved !== d.documentedUrl)
      .map(({ d, resolved }) => `${d.provider} ${d.where}: ${resolved} (documented ${d.documentedUrl})`);
    expect(wrong).toEqual([]);
  });

  it('sends the credential check and the revocation to that URL (those without placeholders, end to end)', () => {
    for (const d of declared.filter((x) => x.where === 'verification.path' && !hasPlaceholder(x.documentedUrl!))) {
      expect([d.provider, verificationUrl(asResource(d.manifest), {}).href]).toEqual([d.provider, new URL(d.documentedUrl!).href]);
    }
    for (const d of declared.filter((x) => x.where === 'revocation.url' && !hasPlaceholder(x.documentedUrl!.replace('${clientId}', '')))) {
      const { url } = revocationRequest(
        d.manifest.spec.revocation!,
        d.manifest.spec,
        { value: 't', hint: 'access_token' },
        { clientId: 'cid' },
        {},
      );
      expect([d.provider, url]).toEqual([d.provider, d.documentedUrl!.replace('${clientId}', 'cid')]);
    }
  });

  it('notices a base that moves (the check this test exists for)', () => {
    const openai = catalog.find((m) => m.metadata.name === 'openai')!;
    const moved = { ...openai.spec, proxy: { ...openai.spec.proxy, baseUrl: 'https://api.openai.com/v1' } };
    expect(providerUrlTemplate(moved, openai.spec.verification!.path)).not.toBe(openai.spec.verification!.documentedUrl);
  });
});
