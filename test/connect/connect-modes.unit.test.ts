/**
 * The Connect UI's view of the auth modes (src/connect/connect-modes.ts, from src/modes): every mode the catalog allows
 * has a flow (so no Provider can reach a "not supported" page), every form field has a readable
 * label, and TWO_STEP's fields come from its Provider, labels included.
 */
import { connectFlowOf, credentialFields, fieldLabel } from '../../src/connect/connect-modes.js';
import { AUTH_MODE_MODULES } from '../../src/modes/registry.js';
import { AUTH_MODES } from '../../src/domain/auth-modes.js';
import type { ProviderResource, ProviderSpec } from '../../src/k8s/resources.js';

const provider = (spec: Partial<ProviderSpec> & Pick<ProviderSpec, 'authMode'>): ProviderResource => ({
  metadata: { name: 'p' },
  spec: { displayName: 'Example', ...spec },
});

describe('Connect modes', () => {
  it('gives every auth mode a redirect or a form, and the redirect modes no credential fields', () => {
    expect(Object.keys(AUTH_MODE_MODULES).sort()).toEqual([...AUTH_MODES].sort());
    for (const mode of AUTH_MODES) {
      expect(['oauth', 'form']).toContain(connectFlowOf(mode));
      if (connectFlowOf(mode) === 'oauth') expect(credentialFields(provider({ authMode: mode }))).toEqual([]);
    }
  });

  it('labels every fixed form field with words, not its key, unless the Provider relabels it', () => {
    for (const mode of AUTH_MODES) {
      const p = provider({ authMode: mode });
      const names = credentialFields(p).map((f) => f.name);
      expect(new Set(names).size).toBe(names.length);
      for (const name of names) expect(fieldLabel(p, name)).not.toBe(name);
    }
    expect(fieldLabel(provider({ authMode: 'API_KEY', fieldLabels: { apiKey: 'Personal token' } }), 'apiKey')).toBe('Personal token');
  });

  it("takes TWO_STEP's fields and labels from its Provider, and none from one whose exchange is unusable", () => {
    const p = provider({
      authMode: 'TWO_STEP',
      twoStep: {
        tokenUrl: 'https://login.example.test/token',
        tokenPath: 'token',
        credentialFields: [{ name: 'pat_name', label: 'Token name', secret: false }, { name: 'pat_secret' }],
      },
    });
    const fields = credentialFields(p).map((f) => ({ ...f, label: fieldLabel(p, f.name, f.label) }));
    expect(fields).toEqual([
      { name: 'pat_name', label: 'Token name', secret: false, required: true },
      { name: 'pat_secret', label: 'pat_secret', secret: true, required: true },
    ]);
    expect(credentialFields(provider({ authMode: 'TWO_STEP', twoStep: { tokenUrl: 'x' } }))).toEqual([]);
  });
});
