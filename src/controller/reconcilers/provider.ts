import type { Clock } from '../../domain/clock.js';
import { PROVIDERS, type ProviderSpec } from '../../k8s/resources.js';
import type { KubeStore } from '../../k8s/store.js';
import { ProviderCondition, ProviderReason, type ConditionInput } from '../../domain/conditions.js';
import { writeConditions } from './conditions.js';
import { TwoStepOptions } from '../../auth/two-step.js';
import { configFieldNames } from '../../catalog/connection-config.js';

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
  const mode = spec.authMode;
  if ((mode === 'OAUTH2' || mode === 'OAUTH1') && (!spec.authorizationUrl || !spec.tokenUrl)) {
    problems.push(`${mode} providers need spec.authorizationUrl and spec.tokenUrl`);
  }
  if (mode === 'OAUTH1' && !spec.requestTokenUrl) problems.push('OAUTH1 providers need spec.requestTokenUrl');
  if ((mode === 'OAUTH2_CC' || mode === 'APP') && !spec.tokenUrl) problems.push(`${mode} providers need spec.tokenUrl`);
  if (mode === 'CUSTOM') {
    // The install page, the installation token URL, and the user authorization's token and installations URLs.
    const missing = [
      ['authorizationUrl', spec.authorizationUrl],
      ['tokenUrl', spec.tokenUrl],
      ['appInstallation.userTokenUrl', spec.appInstallation?.userTokenUrl],
      ['appInstallation.userInstallationsUrl', spec.appInstallation?.userInstallationsUrl],
    ].flatMap(([field, value]) => (value ? [] : [`spec.${field}`]));
    if (missing.length) problems.push(`CUSTOM providers need ${missing.join(', ')}`);
  }
  if (mode === 'INSTALL_PLUGIN' && (!spec.pluginInstall?.installUrl || !spec.pluginInstall.credentialParam))
    problems.push('INSTALL_PLUGIN providers need spec.pluginInstall.installUrl and spec.pluginInstall.credentialParam');
  if (mode === 'API_KEY') {
    const places = [...Object.values(spec.proxy?.headers ?? {}), ...Object.values(spec.proxy?.query ?? {})];
    if (!places.some((v) => v.includes('${apiKey}'))) {
      problems.push('API_KEY providers must say where the key goes: a spec.proxy.headers or spec.proxy.query value containing ${apiKey}');
    }
  }
  if (mode === 'TWO_STEP') {
    const parsed = TwoStepOptions.safeParse(spec.twoStep);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      problems.push(
        `TWO_STEP providers need a usable spec.twoStep (${first ? `${first.path.map(String).join('.')}: ${first.message}` : 'missing'})`,
      );
    }
  }
  if (mode === 'BILL' && !spec.tokenUrl) problems.push('BILL providers need spec.tokenUrl (the Bill.com login URL)');
  if (mode === 'JWT') {
    const alg = (spec.modeOptions as { algorithm?: unknown } | undefined)?.algorithm;
    if (typeof alg !== 'string' || !/^(HS|RS|ES|PS)(256|384|512)$/.test(alg)) {
      problems.push('JWT providers need spec.modeOptions.algorithm (for example ES256 or HS256)');
    }
  }
  if (mode === 'TBA') {
    const key = spec.tba?.accountIdKey ?? 'accountId';
    const names = (spec.connectionConfiguration ?? []).map((f) => (typeof f === 'string' ? f : f.name));
    if (!names.includes(key))
      problems.push(`TBA providers need the account ID (the realm): "${key}" listed in spec.connectionConfiguration`);
  }
  if (mode === 'SIGNATURE' && spec.signature?.protocol !== 'WSSE') problems.push('SIGNATURE providers need spec.signature.protocol (WSSE)');
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
    private readonly store: KubeStore,
    private readonly clock: Clock,
  ) {}

  async reconcile(name: string): Promise<void> {
    const provider = this.store.getProvider(name);
    if (!provider || provider.metadata.deletionTimestamp) return;
    await writeConditions(this.store, PROVIDERS, provider, providerConditions(provider.spec), this.clock.now());
  }
}
