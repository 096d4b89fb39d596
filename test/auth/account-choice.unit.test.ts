/**
 * `several: choose` in the post-connection engine: several accounts become a choice (each account's values
 * checked by its keys' rules, its name and URL as the provider returns them), one account is taken as it is,
 * the chosen values resume the flow without asking again, and a list past the bound fails the step. The
 * step's answers come from a fetch handed in (no provider is involved: the cluster test,
 * test/providers/account-choice.test.ts, runs the simulators).
 */
import { AccountChoiceNeeded, MAX_ACCOUNT_CHOICES, withProviderValues } from '../../src/auth/post-connection.js';
import { systemClock } from '../../src/domain/clock.js';
import { hasCode } from '../../src/domain/errors.js';
import type { ProviderResource, ProviderSpec } from '../../src/k8s/resources.js';

const spec: ProviderSpec = {
  displayName: 'Jira',
  authMode: 'OAUTH2',
  authorizationUrl: 'https://auth.example.com/authorize',
  tokenUrl: 'https://auth.example.com/token',
  connectionConfiguration: [
    { name: 'cloudId', pattern: '[a-z0-9-]{1,64}', from: { step: 'sites', path: 'id' } },
    { name: 'siteHost', hostSuffixes: ['atlassian.net'], from: { step: 'sites', path: 'url', as: 'host' } },
  ],
  postConnection: {
    name: 'sites',
    steps: [
      {
        name: 'sites',
        url: 'https://api.example.com/accessible-resources',
        items: '',
        several: 'choose',
        accountLabel: 'name',
        accountUrl: 'url',
      },
    ],
  },
} as ProviderSpec;
const provider = { metadata: { name: 'jira' }, spec } as unknown as ProviderResource;

function run(answer: unknown, connectionConfig: Record<string, unknown> = {}) {
  const calls: string[] = [];
  const ctx = {
    clock: systemClock,
    fetch: (async (url: string) => {
      calls.push(String(url));
      return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
    }) as unknown as typeof fetch,
  };
  const result = withProviderValues(ctx as never, {
    provider,
    accessToken: 'the-token',
    connectionConfig,
    log: { namespace: 'ns', operation: 'authorization', integration: 'jira' },
  });
  return { result, calls };
}

const site = (id: string, name: unknown, url: unknown) => ({ id, name, url, scopes: [] });

describe('several: choose', () => {
  it('one account is taken as it is', async () => {
    await expect(run([site('one', 'Acme', 'https://acme.atlassian.net')]).result).resolves.toEqual({
      cloudId: 'one',
      siteHost: 'acme.atlassian.net',
    });
  });

  it('several become a choice: values checked, name and https URL as returned, a repeated ID once, no token', async () => {
    const err = await run([
      site('one', 'Acme', 'https://acme.atlassian.net'),
      site('two', '  ', 'https://globex.atlassian.net'),
      site('one', 'Acme again', 'https://acme.atlassian.net'),
    ]).result.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccountChoiceNeeded);
    const choice = err as AccountChoiceNeeded;
    expect(choice.key).toBe('cloudId');
    expect(choice.accounts).toEqual([
      { value: 'one', label: 'Acme', url: 'https://acme.atlassian.net', values: { cloudId: 'one', siteHost: 'acme.atlassian.net' } },
      // No name: the ID is shown.
      { value: 'two', label: 'two', url: 'https://globex.atlassian.net', values: { cloudId: 'two', siteHost: 'globex.atlassian.net' } },
    ]);
    expect(choice.code).toBe('account_choice_needed');
    expect(choice.errors?.[0]).toMatchObject({ path: 'connection_config.cloudId' });
    expect(JSON.stringify({ message: choice.message, errors: choice.errors })).not.toContain('the-token');
  });

  it('an account whose value breaks its rule fails the step (nothing offered)', async () => {
    const err = await run([
      site('one', 'Acme', 'https://acme.atlassian.net'),
      site('two', 'Evil', 'https://evil.example.net'),
    ]).result.catch((e: unknown) => e);
    expect(hasCode(err, 'provider_value_refused')).toBe(true);
  });

  it('the chosen values resume the flow without a request', async () => {
    const { result, calls } = run(
      [site('one', 'Acme', 'https://acme.atlassian.net'), site('two', 'Globex', 'https://globex.atlassian.net')],
      {
        cloudId: 'two',
        siteHost: 'globex.atlassian.net',
      },
    );
    await expect(result).resolves.toEqual({ cloudId: 'two', siteHost: 'globex.atlassian.net' });
    expect(calls).toEqual([]);
  });

  it(`more than ${MAX_ACCOUNT_CHOICES} accounts fail the step, saying what to do and not naming it`, async () => {
    const many = Array.from({ length: MAX_ACCOUNT_CHOICES + 1 }, (_, i) => site(`s${i}`, `Site ${i}`, `https://s${i}.atlassian.net`));
    const err = await run(many).result.catch((e: unknown) => e);
    expect(hasCode(err, 'post_connection_failed')).toBe(true);
    expect((err as Error).message).toContain('try again');
    expect((err as Error).message).not.toMatch(/\bsites\b|\bstep\b/);
  });
});
