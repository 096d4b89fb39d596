/**
 * API_KEY and BASIC forms: the typed credentials checked with the Provider's `verification` call
 * (src/modes/shared/credential-check.ts) before anything is stored, injected by the mode's own proxy
 * injection; a Provider without one stores them unchecked. A refusal or a failed check is the form's
 * error, which the Connect flow logs as a failed attempt.
 */
import { checkTypedCredentials } from './credential-check.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { FormInput, FormOutcome, ModeDeps, ProxyInjection } from '../auth-mode.js';

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

export async function checkedFormCredentials(
  deps: ModeDeps,
  form: FormInput,
  credentials: StoredCredentials,
  injection: ProxyInjection,
  what: string,
): Promise<FormOutcome> {
  const spec = form.provider.spec;
  if (!spec.verification) return { credentials };
  const result = await checkTypedCredentials({
    provider: form.provider,
    values: {
      apiKey: str(credentials.apiKey),
      username: str(credentials.username),
      password: str(credentials.password),
      accessToken: undefined,
      sessionToken: undefined,
    },
    connectionConfig: form.connectionConfig,
    authorization: (headers, url) =>
      injection.authorization({ spec, credentials, headers, method: spec.verification?.method ?? 'GET', url: () => url }),
    what,
    fetch: deps.fetch,
  });
  return result.ok ? { credentials } : { refused: result.error, detail: result.detail };
}
