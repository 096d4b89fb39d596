/**
 * Connection configuration values a Provider takes from the token answer (`from: { tokenResponse }`)
 * that a refresh answer carries anew: Pipedrive sends `api_domain` on every refresh, and a company's
 * domain can change (https://developers.pipedrive.com/changelog/post/new-parameter-in-oauth-oauthtoken-responses).
 * A session step run again after a refresh gives its values anew too (Bullhorn's login, `restUrl`). A value
 * the answer lacks, or that breaks its key's rule, leaves the stored one as it is.
 */
import { configValueProblem } from '../../catalog/connection-config.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import { valuesFromAnswers } from '../provider-answers.js';

export interface ProviderValueChange {
  key: string;
  /** The stored value (none when the key had none). */
  from?: string;
  to: string;
  /** Which answer carried it (the refresh answer when not said). */
  source?: string;
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
  return changedFrom(spec, valuesFromAnswers({ connectionConfiguration: fromAnswer }, { tokenAnswer: answer }, {}), current);
}

/** Of `values` (another answer's: a session step's), those that differ from `current` and pass their keys' rules. */
export function changedFrom(
  spec: ProviderSpec,
  values: Record<string, string>,
  current: Record<string, unknown> | undefined,
  source?: string,
): ProviderValueChange[] {
  const changes: ProviderValueChange[] = [];
  for (const [key, to] of Object.entries(values)) {
    const was = current?.[key];
    if (was === to || configValueProblem(spec, key, to) !== undefined) continue;
    changes.push({ key, ...(typeof was === 'string' ? { from: was } : {}), to, ...(source ? { source } : {}) });
  }
  return changes;
}

/** The operation log's words for the changes. */
export function describeChanges(changes: ProviderValueChange[]): string[] {
  return changes.map(
    (c) =>
      `Connection configuration ${c.key} changed from ${c.from === undefined ? 'nothing' : JSON.stringify(c.from)} to ${JSON.stringify(c.to)}: ${c.source ?? "the provider's refresh answer"} carried it`,
  );
}
