/**
 * Connection configuration values a Provider takes from the token answer (`from: { tokenResponse }`)
 * that a refresh answer carries anew: Pipedrive sends `api_domain` on every refresh, and a company's
 * domain can change (https://developers.pipedrive.com/changelog/post/new-parameter-in-oauth-oauthtoken-responses).
 * A value the answer lacks, or that breaks its key's rule, leaves the stored one as it is.
 */
import { configValueProblem } from '../../catalog/connection-config.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import { valuesFromAnswers } from '../provider-answers.js';

export interface ProviderValueChange {
  key: string;
  /** The stored value (none when the key had none). */
  from?: string;
  to: string;
}

/** The token-answer values of `answer` that differ from `current` and pass their keys' rules. */
export function changedProviderValues(
  spec: ProviderSpec,
  answer: Record<string, unknown> | undefined,
  current: Record<string, unknown> | undefined,
): ProviderValueChange[] {
  if (!answer) return [];
  const fromAnswer = (spec.connectionConfiguration ?? []).filter((f) => typeof f !== 'string' && f.from?.tokenResponse);
  if (!fromAnswer.length) return [];
  const values = valuesFromAnswers({ connectionConfiguration: fromAnswer }, { tokenAnswer: answer }, {});
  const changes: ProviderValueChange[] = [];
  for (const [key, to] of Object.entries(values)) {
    const was = current?.[key];
    if (was === to || configValueProblem(spec, key, to) !== undefined) continue;
    changes.push({ key, ...(typeof was === 'string' ? { from: was } : {}), to });
  }
  return changes;
}

/** The operation log's words for the changes. */
export function describeChanges(changes: ProviderValueChange[]): string[] {
  return changes.map(
    (c) =>
      `Connection configuration ${c.key} changed from ${c.from === undefined ? 'nothing' : JSON.stringify(c.from)} to ${JSON.stringify(c.to)}: the provider's refresh answer carried it`,
  );
}
