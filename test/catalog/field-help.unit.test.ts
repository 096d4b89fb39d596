/**
 * Help on every field an end user types (dev/field-help.ts has the rule): every shipped manifest has a
 * description, an example (or a comment that the docs show none) and an https docsUrl on the provider's own
 * domain for each typed field, or a comment that the provider's docs are silent and a description saying so.
 */
import type { ProviderResource } from '../../src/k8s/resources.js';
import { fieldHelpProblems, readManifests, typedFields } from '../../dev/field-help.js';

const manifests = readManifests();

const provider = (spec: Record<string, unknown>): ProviderResource =>
  ({ apiVersion: 'latchkey.dev/v1alpha1', kind: 'Provider', metadata: { name: 'check' }, spec }) as unknown as ProviderResource;

const help = {
  description: 'In Check, open Settings → API and create a key.',
  example: 'chk_XXXXXXXXXXXXXXXX',
  docsUrl: 'https://docs.check.example/keys',
};
const apiKeyProvider = (fieldHelp: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) =>
  provider({
    displayName: 'Check',
    authMode: 'API_KEY',
    docs: 'https://docs.check.example/',
    proxy: { baseUrl: 'https://api.check.example' },
    ...(fieldHelp ? { fieldHelp } : {}),
    ...extra,
  });

describe('help on every typed field (config/providers)', () => {
  it('gives every typed field of every shipped manifest its description, example and docs page', () => {
    expect(manifests.length).toBeGreaterThan(1000);
    const problems = manifests.flatMap((m) => fieldHelpProblems(m.provider, m.text).map((p) => `${m.file}: ${p}`));
    expect(problems).toEqual([]);
  });

  it("computes the typed fields as the Connect UI does: credentials, and configuration the flow doesn't fill", () => {
    expect(typedFields(apiKeyProvider(undefined, { connectionConfiguration: ['subdomain'] }))).toEqual([
      { name: 'apiKey', secret: true },
      { name: 'subdomain', secret: false },
    ]);
    // OAuth 2: no credential field; APP: the flow fills the app slug and installation ID.
    expect(typedFields(provider({ displayName: 'C', authMode: 'OAUTH2', connectionConfiguration: ['tenant'] }))).toEqual([
      { name: 'tenant', secret: false },
    ]);
    expect(typedFields(provider({ displayName: 'C', authMode: 'APP', connectionConfiguration: ['appSlug', 'installationId'] }))).toEqual(
      [],
    );
  });

  it('accepts complete help and catches each missing or wrong part (the check is not vacuous)', () => {
    expect(fieldHelpProblems(apiKeyProvider({ apiKey: help }), '')).toEqual([]);
    const problem = (fieldHelp: Record<string, unknown> | undefined, text = '', extra: Record<string, unknown> = {}) =>
      fieldHelpProblems(apiKeyProvider(fieldHelp, extra), text);
    expect(problem(undefined)).toEqual(['apiKey: no fieldHelp']);
    expect(problem({ apiKey: { ...help, description: undefined } })).toEqual(['apiKey: no description']);
    expect(problem({ apiKey: { ...help, docsUrl: 'http://docs.check.example/keys' } })).toEqual(['apiKey: no https docsUrl']);
    expect(problem({ apiKey: { ...help, docsUrl: 'https://nango.dev/docs/check' } })).toEqual([
      'apiKey: docsUrl is on nango.dev, not on check.example (if the provider\'s docs live there, say so: "# fieldHelp docs on nango.dev: <why>")',
    ]);
    expect(problem({ apiKey: { ...help, example: undefined } })).toEqual([
      'apiKey: no example (or "# fieldHelp apiKey: the docs show no example")',
    ]);
    expect(problem({ apiKey: { ...help, example: 'chk_9f8a7b6c5d4e3f2a1b0c' } })).toEqual([
      'apiKey: the example of a secret must look like a placeholder (XXXX, … or <name>): "chk_9f8a7b6c5d4e3f2a1b0c"',
    ]);
    expect(problem({ apiKey: help }, '  # fieldHelp apiKey: the docs show no example\n')).toEqual([
      'apiKey: has an example, and a comment saying the docs show none',
    ]);
    // A configuration key needs its own help too.
    expect(problem({ apiKey: help }, '', { connectionConfiguration: ['subdomain'] })).toEqual(['subdomain: no fieldHelp']);
  });

  it('accepts the comments a manifest gives where the docs show no example or live on another domain', () => {
    const elsewhere = { ...help, docsUrl: 'https://check.zendesk.com/hc/articles/1' };
    expect(
      fieldHelpProblems(
        apiKeyProvider({ apiKey: { ...elsewhere, example: undefined } }),
        "  # fieldHelp apiKey: the docs show no example\n  # fieldHelp docs on zendesk.com: Check's help centre is hosted on Zendesk\n",
      ),
    ).toEqual([]);
    // One comment may name several fields.
    expect(
      fieldHelpProblems(
        apiKeyProvider(
          { apiKey: { ...help, example: undefined }, subdomain: { ...help, example: undefined } },
          { connectionConfiguration: ['subdomain'] },
        ),
        '  # fieldHelp apiKey, subdomain: the docs show no example\n',
      ),
    ).toEqual([]);
    // The same brand under another public suffix is the provider's own.
    expect(fieldHelpProblems(apiKeyProvider({ apiKey: { ...help, docsUrl: 'https://help.check.io/keys' } }), '')).toEqual([]);
    // A reason is required.
    expect(fieldHelpProblems(apiKeyProvider({ apiKey: elsewhere }), '  # fieldHelp docs on zendesk.com:\n')).toHaveLength(1);
  });

  it("accepts a field whose provider's docs are silent, only with a reason, a description saying so, and no page or example", () => {
    const said = { description: "The API key Check's API takes as a Bearer token; Check's docs do not say where to find it." };
    const comment = "  # fieldHelp apiKey: the provider's docs are silent: searched docs.check.example for API keys\n";
    expect(fieldHelpProblems(apiKeyProvider({ apiKey: said }), comment)).toEqual([]);
    // Several fields in one comment.
    expect(
      fieldHelpProblems(
        apiKeyProvider(
          { apiKey: said, subdomain: { description: "Your Check subdomain; Check's docs do not say where it is shown." } },
          {
            connectionConfiguration: ['subdomain'],
          },
        ),
        "  # fieldHelp apiKey, subdomain: the provider's docs are silent: nothing on check.example\n",
      ),
    ).toEqual([]);
    const problem = (fieldHelp: Record<string, unknown> | undefined, text = comment) => fieldHelpProblems(apiKeyProvider(fieldHelp), text);
    // Still an entry with a description.
    expect(problem(undefined)).toEqual(['apiKey: no fieldHelp']);
    expect(problem({ apiKey: {} })).toEqual(['apiKey: no description']);
    // A reason is required.
    for (const empty of [
      "  # fieldHelp apiKey: the provider's docs are silent:\n",
      "  # fieldHelp apiKey: the provider's docs are silent\n",
    ])
      expect(problem({ apiKey: said }, empty)).toEqual([
        'apiKey: the comment that the docs are silent names no reason (what was looked for, and where)',
      ]);
    // A page or an example contradicts the comment; nothing is invented.
    expect(problem({ apiKey: { ...said, docsUrl: help.docsUrl } })).toEqual([
      'apiKey: has a docsUrl, and a comment saying the docs are silent',
    ]);
    expect(problem({ apiKey: { ...said, example: help.example } })).toEqual([
      'apiKey: has an example, and a comment saying the docs are silent',
    ]);
    expect(problem({ apiKey: said }, comment + '  # fieldHelp apiKey: the docs show no example\n')).toEqual([
      'apiKey: says both that the docs show no example and that they are silent',
    ]);
    // The end user reads that the docs are silent.
    expect(problem({ apiKey: { description: 'The API key.' } })).toEqual([
      'apiKey: the docs are silent, and the description does not say so ("… docs do not say …")',
    ]);
    // A comment about a field the end user does not type is stale.
    expect(problem({ apiKey: help }, "  # fieldHelp region: the provider's docs are silent: nothing on check.example\n")).toEqual([
      'region: a comment says the docs are silent, but the end user does not type it',
    ]);
    // Without the comment, the help is held to the full rule.
    expect(problem({ apiKey: said }, '')).toEqual([
      'apiKey: no https docsUrl',
      'apiKey: no example (or "# fieldHelp apiKey: the docs show no example")',
    ]);
  });
});
