/**
 * Connection configuration the platform team sets on the Integration (`setBy: integration` on a Provider's
 * key, the value in the Integration's `spec.connectionConfig`): a self-managed server's host, where the
 * Integration's client secret goes. End users and callers never choose it: a value they send must equal
 * the Integration's, and every connection of the Integration carries the Integration's value, so the
 * Provider's URL templates (`${connectionConfig.host}`) read it as any other key.
 */
import { MODES_WITHOUT_INTEGRATION_SECRET } from '../domain/auth-modes.js';
import { LatchkeyError } from '../domain/errors.js';
import type { IntegrationSpec, ProviderSpec } from '../k8s/resources.js';
import { configFields, configValueProblem, type ConfigField } from './connection-config.js';

export function integrationSetFields(spec: Pick<ProviderSpec, 'connectionConfiguration'>): ConfigField[] {
  return configFields(spec).filter((f) => f.setBy === 'integration');
}

/**
 * The anyHost rule: any public host is allowed where no integration secret is sent to it, and elsewhere
 * only on a key the Integration sets (an end user could otherwise send the client secret to their own server).
 * The Provider CRD's CEL rule says the same; this is its wording for a Provider that skipped it.
 */
export function anyHostProblems(spec: ProviderSpec): string[] {
  if (MODES_WITHOUT_INTEGRATION_SECRET.includes(spec.authMode)) return [];
  return configFields(spec)
    .filter((f) => f.anyHost && f.setBy !== 'integration')
    .map(
      (f) =>
        `spec.connectionConfiguration "${f.name}" has anyHost in ${spec.authMode}, which sends the integration's client secret ` +
        'to that host: only a key the Integration sets (setBy: integration) may be any host',
    );
}

/** One problem of an Integration's `spec.connectionConfig`: a required key unset, a value its rule refuses, a key not its to set. */
export interface IntegrationConfigProblem {
  key: string;
  kind: 'missing' | 'invalid' | 'unknown';
  message: string;
}

/**
 * What is wrong with an Integration's `spec.connectionConfig` for its Provider (empty when nothing). For the
 * Integration's Ready condition: messages name keys, never values.
 */
export function integrationConfigProblems(
  provider: ProviderSpec,
  integration: Pick<IntegrationSpec, 'connectionConfig'>,
): IntegrationConfigProblem[] {
  const fields = integrationSetFields(provider);
  const values = integration.connectionConfig ?? {};
  const problems: IntegrationConfigProblem[] = [];
  for (const key of Object.keys(values))
    if (!fields.some((f) => f.name === key))
      problems.push({ key, kind: 'unknown', message: `spec.connectionConfig.${key} is not a key this Provider lets the Integration set` });
  for (const f of fields) {
    const value = values[f.name]?.trim();
    if (!value) {
      if (f.required && f.default === undefined && !f.urlPath)
        problems.push({ key: f.name, kind: 'missing', message: `spec.connectionConfig.${f.name} is required (${f.label ?? f.name})` });
      continue;
    }
    const problem = configValueProblem(provider, f.name, value);
    if (problem) problems.push({ key: f.name, kind: 'invalid', message: `spec.connectionConfig.${f.name}: ${problem}` });
  }
  return problems;
}

/**
 * A connection's configuration with the Integration's values in place of its `setBy: integration` keys.
 * A caller's value that differs is refused (400 `invalid_connection_config`); an Integration that lacks a
 * required value, or holds one its key's rule refuses, is the Integration's state (409 `integration_not_configured`).
 */
export function withIntegrationConfig(
  provider: ProviderSpec,
  integration: Pick<IntegrationSpec, 'connectionConfig'>,
  given: Record<string, unknown> | undefined,
  path = 'connection_config',
): Record<string, unknown> {
  const fields = integrationSetFields(provider);
  const out: Record<string, unknown> = { ...(given ?? {}) };
  if (!fields.length) return out;
  if (integrationConfigProblems(provider, integration).some((p) => p.kind !== 'unknown')) {
    throw new LatchkeyError(
      'conflict',
      'integration_not_configured',
      `This integration is not fully configured yet: the platform team sets ${fields.map((f) => `"${f.name}"`).join(', ')} on the Integration (spec.connectionConfig).`,
    );
  }
  const values = integration.connectionConfig ?? {};
  const contradicted: string[] = [];
  for (const f of fields) {
    const mine = values[f.name]?.trim();
    const sent = out[f.name];
    if (sent !== undefined && sent !== null && sent !== '' && String(sent).trim() !== mine) contradicted.push(f.name);
    if (mine) out[f.name] = mine;
    else delete out[f.name];
  }
  if (contradicted.length) {
    throw new LatchkeyError(
      'invalid_input',
      'invalid_connection_config',
      `Invalid connection configuration: ${contradicted.map((k) => `"${k}"`).join(', ')} set by the integration`,
      {
        errors: contradicted.map((k) => ({
          path: `${path}.${k}`,
          message: `"${k}" is set by the integration; leave it out or send the integration's value`,
        })),
      },
    );
  }
  return out;
}

/**
 * The integrations API's `connection_config` (its extension of Nango's bodies): each key must be one the Provider
 * lets the Integration set, each value must pass that key's rule; otherwise a 400 `invalid_connection_config`
 * naming every bad key (never its value). A required key left out is no error here: the Integration is then not
 * Ready (`ConnectionConfigMissing`), as with kubectl, until a PATCH sets it.
 */
export function checkIntegrationConfigInput(provider: ProviderSpec, values: Record<string, string>, path = 'connection_config'): void {
  const fields = integrationSetFields(provider);
  const errors: Array<{ path: string; message: string }> = [];
  for (const [key, value] of Object.entries(values)) {
    if (!fields.some((f) => f.name === key)) {
      errors.push({
        path: `${path}.${key}`,
        message: fields.length
          ? `"${key}" is not a key this provider lets the integration set (those are ${fields.map((f) => `"${f.name}"`).join(', ')})`
          : `"${key}" is not a key this provider lets the integration set (it has none)`,
      });
      continue;
    }
    const problem = configValueProblem(provider, key, value);
    if (problem) errors.push({ path: `${path}.${key}`, message: problem });
  }
  if (errors.length)
    throw new LatchkeyError(
      'invalid_input',
      'invalid_connection_config',
      `Invalid connection configuration: ${errors.map((e) => e.message).join('; ')}`,
      { errors },
    );
}
