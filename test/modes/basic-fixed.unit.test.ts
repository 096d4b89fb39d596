/**
 * BASIC's fixed credential field (`spec.basic.fixed`, src/modes/basic/options.ts): the Connect form does not
 * ask for it and requires the other, an import may leave it out or send the same value (another is a 400),
 * and the proxy sends the fixed value. Against the shipped manifests whose docs fix a field:
 * - lemlist: "The login (username) is always empty" (https://developer.lemlist.com/api-reference/getting-started/authentication)
 * - Maxio Advanced Billing (Chargify): "Your password is always the letter x" (https://docs.chargify.com/api-authentication)
 * - Affinity API v1: no user name, the key as the password (https://api-docs.affinity.co/#authentication)
 * And the catalog rule: no form field an end user must fill is labelled "Leave empty".
 */
import type { ProviderResource } from '../../src/k8s/resources.js';
import type { FormInput, ModeDeps } from '../../src/modes/auth-mode.js';
import { basic } from '../../src/modes/basic/mode.js';
import { credentialFields, fieldLabel } from '../../src/connect/connect-modes.js';
import { providerModeProblems } from '../../src/modes/registry.js';
import { readCatalog } from '../support/catalog-files.js';

const catalog = readCatalog();
const provider = (name: string): ProviderResource => {
  const m = catalog.find((x) => x.metadata.name === name)!;
  return { metadata: { name }, spec: m.spec } as ProviderResource;
};
const deps = {} as ModeDeps;
const header = (p: ProviderResource, credentials: Record<string, unknown>) =>
  basic.proxy.authorization({
    spec: p.spec,
    credentials: { type: 'BASIC', ...credentials },
    headers: {},
    method: 'GET',
    url: () => new URL('https://x.example'),
  });
const basicOf = (s: string) => `Basic ${Buffer.from(s, 'utf8').toString('base64')}`;
const refusal = async (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: { code?: string; details?: unknown }) => e,
  );

describe('BASIC fixed fields', () => {
  it('ships a fixed field only where the docs say: lemlist, Affinity and Azure DevOps (empty user name), Maxio (password x)', () => {
    const fixed = catalog.filter((m) => m.spec.authMode === 'BASIC' && m.spec.basic).map((m) => [m.metadata.name, m.spec.basic?.fixed]);
    expect(Object.fromEntries(fixed)).toEqual({
      affinity: { username: '' },
      'azure-devops': { username: '' },
      lemlist: { username: '' },
      maxio: { password: 'x' },
    });
    for (const [name] of fixed) expect(providerModeProblems(provider(name as string).spec)).toEqual([]);
  });

  it('shows only the field to type, required', () => {
    expect(credentialFields(provider('affinity'))).toEqual([{ name: 'password', secret: true, required: true }]);
    expect(credentialFields(provider('lemlist'))).toEqual([{ name: 'password', secret: true, required: true }]);
    expect(credentialFields(provider('maxio'))).toEqual([{ name: 'username', secret: false, required: true }]);
    // Without a fixed field both are asked and an empty password is allowed, as before.
    expect(credentialFields(provider('lever-basic'))).toEqual([
      { name: 'username', secret: false, required: true },
      { name: 'password', secret: true, required: false },
    ]);
  });

  it('has no required form field labelled "Leave empty" anywhere in the catalog', () => {
    const wrong = catalog.flatMap((m) =>
      credentialFields({ metadata: { name: m.metadata.name }, spec: m.spec } as ProviderResource)
        .filter(
          (f) =>
            f.required &&
            /leave (it )?empty/i.test(
              fieldLabel({ metadata: { name: m.metadata.name }, spec: m.spec } as ProviderResource, f.name, f.label),
            ),
        )
        .map((f) => `${m.metadata.name}.${f.name}`),
    );
    expect(wrong).toEqual([]);
  });

  it('stores the fixed value from a form that sends only the key', async () => {
    const connect = basic.connect;
    if (connect.flow !== 'form') throw new Error('BASIC is a form');
    const form = {
      namespace: 'n',
      integration: {} as never,
      provider: provider('lemlist'),
      values: { password: 'lem-key' },
      connectionConfig: {},
      label: (n: string) => n,
    };
    expect(await connect.credentials(deps, form as FormInput)).toEqual({
      credentials: { type: 'BASIC', username: '', password: 'lem-key' },
    });
  });

  it('imports with the fixed field absent or equal (a Nango SDK sends both), and refuses another value or a missing key with 400s naming the field', async () => {
    const input = (name: string, given: Record<string, unknown>) => ({
      namespace: 'n',
      integration: {} as never,
      provider: provider(name),
      given: { type: 'BASIC', ...given },
    });
    expect(await basic.fromImport(deps, input('affinity', { password: 'aff-key' }))).toEqual({
      credentials: { type: 'BASIC', username: '', password: 'aff-key' },
    });
    expect(await basic.fromImport(deps, input('affinity', { username: '', password: 'aff-key' }))).toEqual({
      credentials: { type: 'BASIC', username: '', password: 'aff-key' },
    });
    expect(await basic.fromImport(deps, input('maxio', { username: 'mx-key', password: 'x' }))).toEqual({
      credentials: { type: 'BASIC', username: 'mx-key', password: 'x' },
    });
    const wrong = await refusal(basic.fromImport(deps, input('affinity', { username: 'aff-key', password: '' })));
    expect(wrong).toMatchObject({ code: 'fixed_by_provider', errors: [{ path: 'body.credentials.username' }] });
    expect(JSON.stringify(wrong)).not.toContain('aff-key');
    const missing = await refusal(basic.fromImport(deps, input('lemlist', {})));
    expect(missing).toMatchObject({ code: 'missing_credentials', errors: [{ path: 'body.credentials.password' }] });
    // A provider fixing nothing still needs both on import.
    const plain = await refusal(basic.fromImport(deps, input('lever-basic', { username: 'k' })));
    expect(plain).toMatchObject({ code: 'missing_credentials', errors: [{ path: 'body.credentials.password' }] });
    // The flat body alike.
    const flat = (name: string, fields: Record<string, string>) =>
      basic.fromFlatImport(deps, { namespace: 'n', integration: {} as never, provider: provider(name), fields });
    expect(await flat('lemlist', { password: 'lem-key' })).toEqual({ type: 'BASIC', username: '', password: 'lem-key' });
    expect(await refusal(flat('maxio', { username: 'k', password: 'y' }))).toMatchObject({ code: 'fixed_by_provider' });
  });

  it("sends the documented header: lemlist and Affinity Basic base64(':' + key), Maxio base64(key + ':x'), whatever was stored", () => {
    expect(header(provider('lemlist'), { username: '', password: 'lem-key' })).toBe(basicOf(':lem-key'));
    expect(header(provider('affinity'), { username: '', password: 'aff-key' })).toBe(basicOf(':aff-key'));
    expect(header(provider('maxio'), { username: 'mx-key', password: 'x' })).toBe(basicOf('mx-key:x'));
    // A connection stored before the Provider fixed the field still sends the documented value.
    expect(header(provider('lemlist'), { username: 'typed-by-mistake', password: 'lem-key' })).toBe(basicOf(':lem-key'));
  });

  it('refuses a block that fixes both fields or neither', () => {
    const spec = (basicBlock: unknown) => ({ displayName: 'B', authMode: 'BASIC' as const, basic: basicBlock as never });
    expect(providerModeProblems(spec({ fixed: { username: '', password: '' } }))).toEqual([
      expect.stringMatching(/^spec\.basic is not usable/),
    ]);
    expect(providerModeProblems(spec({ fixed: {} }))).toEqual([expect.stringMatching(/^spec\.basic is not usable/)]);
    expect(providerModeProblems(spec({ fixed: { username: '' } }))).toEqual([]);
  });
});
