import type { Clock } from '../../domain/clock.js';
import { PROVIDERS, type ProviderSpec } from '../../k8s/resources.js';
import { ProviderCondition, ProviderReason, type ConditionInput } from '../../domain/conditions.js';
import { writeConditions, type CatalogParts } from './conditions.js';
import { providerModeProblems } from '../../modes/registry.js';
import { configFieldNames, urlPathProblems } from '../../catalog/connection-config.js';
import { anyHostProblems } from '../../catalog/integration-config.js';

const PLACEHOLDER = /\$\{connectionConfig\.([A-Za-z0-9_]+)\}/g;

/** Problems with a Provider's spec, each a sentence saying what is wrong and where. Empty when valid. */
export function validateProvider(spec: ProviderSpec): string[] {
  const problems: string[] = [];
  const declared = new Set(configFieldNames(spec));
  const urlFields: Array<[string, string | undefined]> = [
    ['authorizationUrl', spec.authorizationUrl],
    ['tokenUrl', spec.tokenUrl],
    ['refreshUrl', spec.refreshUrl],
    ['requestTokenUrl', spec.requestTokenUrl],
    ['proxy.baseUrl', spec.proxy?.baseUrl],
    ['twoStep.tokenUrl', typeof spec.twoStep?.tokenUrl === 'string' ? spec.twoStep.tokenUrl : undefined],
    ['appInstallation.installationUrl', spec.appInstallation?.installationUrl],
    ['appInstallation.userTokenUrl', spec.appInstallation?.userTokenUrl],
    ['appInstallation.userInstallationsUrl', spec.appInstallation?.userInstallationsUrl],
    ['pluginInstall.installUrl', spec.pluginInstall?.installUrl],
  ];
  for (const [field, value] of urlFields) {
    if (value === undefined) continue;
    const undeclared = [...value.matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((k) => !declared.has(k));
    if (undeclared.length) {
      problems.push(
        `spec.${field} uses \${connectionConfig.${undeclared[0]}} but "${undeclared[0]}" is not listed in spec.connectionConfiguration`,
      );
    }
    // Placeholders hold host labels or path segments: check the URL with a stand-in value.
    const sample = value.replace(PLACEHOLDER, 'x');
    let url: URL | undefined;
    try {
      url = new URL(sample);
    } catch {
      problems.push(`spec.${field} is not an absolute URL: "${value.slice(0, 200)}"`);
      continue;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') problems.push(`spec.${field} must be an http(s) URL, not ${url.protocol}`);
  }
  // Any host only where no integration secret follows it, or where the Integration sets it (the CRD's CEL rule too).
  problems.push(...anyHostProblems(spec));
  // A context path (urlPath) only where a path goes, after the host.
  problems.push(...urlPathProblems(spec));
  // What the auth mode needs of its Provider: its module says, and its options block's schema.
  problems.push(...providerModeProblems(spec));
  return problems;
}

export function providerConditions(spec: ProviderSpec): ConditionInput<typeof ProviderCondition.Ready, ProviderReason>[] {
  const problems = validateProvider(spec);
  if (problems.length === 0) {
    return [{ type: ProviderCondition.Ready, status: 'True', reason: ProviderReason.Valid, message: 'The provider definition is valid.' }];
  }
  return [
    {
      type: ProviderCondition.Ready,
      status: 'False',
      reason: ProviderReason.InvalidSpec,
      message: `Fix the Provider manifest: ${problems.join('; ')}.`,
    },
  ];
}

/** Validates a Provider and writes its `Ready` condition (the only writer of a Provider's conditions). */
export class ProviderReconciler {
  constructor(
    private readonly store: CatalogParts,
    private readonly clock: Clock,
  ) {}

  async reconcile(name: string): Promise<void> {
    const provider = this.store.catalog.getProvider(name);
    if (!provider || provider.metadata.deletionTimestamp) return;
    await writeConditions(this.store, PROVIDERS, provider, providerConditions(provider.spec), this.clock.now());
  }
}
