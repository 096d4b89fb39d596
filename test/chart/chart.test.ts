/**
 * The Helm chart against the real control plane of the test run:
 *   1. the offline checks (test/chart/verify.sh: lint, template, values schema, kubeconform);
 *   2. helm install / upgrade / uninstall with the default values, the chart owning the CRDs
 *      (it takes over the CRDs the global setup applied; they are kept on uninstall);
 *   3. helm install / uninstall with ci/production-values.yaml, limited to two namespaces (and an
 *      install naming a namespace that does not exist stops before creating anything);
 *   4. RBAC: Latchkey's real server and controller (src/app/run.ts), as the chart's ServiceAccount
 *      (impersonated), work in the granted namespace, and calls outside the rules are forbidden.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
  type V1Deployment,
} from '@kubernetes/client-node';
import { loadConfig } from '../../src/platform/config.js';
import { statusOf } from '../../src/k8s/errors.js';
import { ConnectionEvents } from '../../src/k8s/events.js';
import { FlowRecords } from '../../src/k8s/flow-records.js';
import { Leases } from '../../src/k8s/leases.js';
import { GROUP, LABELS, VERSION, type CommonStatus } from '../../src/k8s/resources.js';
import { WebhookOutbox } from '../../src/k8s/webhook-outbox.js';
import { createLogger } from '../../src/platform/log.js';
import { runLatchkey, type Running } from '../../src/app/run.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import {
  CHART,
  describeObject,
  Helm,
  impersonating,
  installWithoutCrdsOrCatalog,
  mustSucceed,
  platformObjects,
  readBack,
  run,
} from './helm.js';
import { ConnectionStatusWriter } from '../../src/domain/connection-status-writers.js';

const kc = testKubeConfig();
const kubeconfigPath = process.env.LATCHKEY_TEST_KUBECONFIG!;
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const crdApi = kc.makeApiClient(ApiextensionsV1Api);
const CRDS = [
  'connections.latchkey.dev',
  'credentialbindings.latchkey.dev',
  'environments.latchkey.dev',
  'integrations.latchkey.dev',
  'providers.latchkey.dev',
];
const KEEP = 'helm.sh/resource-policy';
const RELEASE = 'latchkey';
type Namespace = Awaited<ReturnType<typeof createTestNamespace>>;
/** An install or uninstall of hundreds of objects (the catalog) can take minutes on a loaded, shared 2-core machine. */
const HELM_TEST_TIMEOUT = 400_000;

let helm: Helm;

beforeAll(async () => {
  helm = await Helm.build(kubeconfigPath);
}, 1_500_000);
afterAll(() => helm?.cleanup());

async function crdUids(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of CRDS) out[name] = (await crdApi.readCustomResourceDefinition({ name })).metadata!.uid!;
  return out;
}

/**
 * Deletes the catalog Providers an uninstalled release left (crds.keep keeps them, owned by that
 * release's name and namespace), as an administrator would before installing elsewhere.
 */
async function deleteKeptProviders(objects: KubernetesObject[]): Promise<void> {
  for (const o of objects.filter((x) => x.kind === 'Provider')) await deleteProvider(kc, o.metadata!.name!);
}

/** True when every Latchkey CRD carries helm.sh/resource-policy: keep (uninstalling cannot delete it). */
async function crdsKeptOnUninstall(): Promise<boolean> {
  for (const name of CRDS) {
    const crd = await crdApi.readCustomResourceDefinition({ name });
    if (crd.metadata?.annotations?.[KEEP] !== 'keep') return false;
  }
  return true;
}

async function expectAllAccepted(objects: KubernetesObject[], namespace: string): Promise<void> {
  const missing: string[] = [];
  for (const o of objects) if (!(await readBack(kc, o, namespace))) missing.push(describeObject(o));
  expect(missing).toEqual([]);
}

async function expectAllGone(objects: KubernetesObject[], namespace: string): Promise<void> {
  await eventually(
    async () => {
      for (const o of objects) if (await readBack(kc, o, namespace)) throw new Error(`${describeObject(o)} still exists`);
      return true;
    },
    30_000,
    250,
  );
}

const kinds = (objects: KubernetesObject[]) => objects.map((o) => o.kind!).sort();
const count = (objects: KubernetesObject[], kind: string) => objects.filter((o) => o.kind === kind).length;
const envOf = (d: V1Deployment, container: string) =>
  Object.fromEntries((d.spec!.template.spec!.containers.find((c) => c.name === container)!.env ?? []).map((e) => [e.name, e.value]));
/** The chart's two Deployments, one per component: `<release>-controller` and `<release>-server`. */
const COMPONENTS = ['controller', 'server'] as const;
const readDeployment = (namespace: string, component: (typeof COMPONENTS)[number]) =>
  apps.readNamespacedDeployment({ namespace, name: `${RELEASE}-${component}` });

describe('offline checks (test/chart/verify.sh)', () => {
  it('passes helm lint, helm template, the values schema guards and kubeconform -strict', async () => {
    const env = { ...process.env };
    delete env.KUBECONFIG; // the in-cluster part is this file's job
    const r = mustSucceed('bash test/chart/verify.sh', await run('bash', [join(REPO_ROOT, 'test/chart/verify.sh')], env, 1_200_000));
    expect(r.stdout).toMatch(/chart: [1-9]\d* passed, 0 failed/);
    expect(r.stdout).not.toMatch(/FAIL/);
  }, 1_200_000);
});

describe('default values, with the chart installing the CRDs', () => {
  let ns: Namespace;
  let installed = false;
  let uidsBefore: Record<string, string>;
  let rendered: KubernetesObject[];

  // Every case starts from the installed release (each can run alone); the upgrade and uninstall
  // cases change it, so they come last, in that order, when the whole file runs.
  beforeAll(async () => {
    ns = await createTestNamespace(kc, 'chart');
    // The chart's CRD copies must equal crds/ (what the other test files run against), or taking
    // them over would change the CRDs under the other tests.
    mustSucceed('charts/latchkey/sync-crds.sh --check', await run('bash', [join(CHART, 'sync-crds.sh'), '--check']));
    uidsBefore = await crdUids();
    // The global setup applied the CRDs (server-side apply, no Helm metadata); --take-ownership
    // adopts them, as it would adopt CRDs a platform team applied with kubectl before moving to the chart.
    await helm.ok(['install', RELEASE, CHART, '-n', ns.name, '--take-ownership', '--set', 'catalog.include={trello,openai}']);
    installed = true;
    rendered = await helm.manifest(RELEASE, ns.name);
  }, HELM_TEST_TIMEOUT);
  afterAll(async () => {
    // Never uninstall a release owning the CRDs unless they are kept: other test files use them.
    const left = await helm.manifest(RELEASE, ns.name).catch(() => []);
    if (installed && (await crdsKeptOnUninstall())) await helm.run(['uninstall', RELEASE, '-n', ns.name]);
    await deleteKeptProviders(left);
    await ns.delete();
  });

  it(
    'helm install takes over the existing CRDs and every rendered object is accepted by the API server',
    async () => {
      expect(kinds(rendered)).toEqual([
        // Providers, the namespaced rights, the token and access reviews, CredentialBindings and get on
        // Namespaces (their labels), each with its binding; and the five workload roles (docs/workloads.md).
        'ClusterRole',
        'ClusterRole',
        'ClusterRole',
        'ClusterRole',
        'ClusterRole',
        'ClusterRole',
        'ClusterRole',
        'ClusterRole',
        'ClusterRole',
        'ClusterRole',
        'ClusterRoleBinding',
        'ClusterRoleBinding',
        'ClusterRoleBinding',
        'ClusterRoleBinding',
        'ClusterRoleBinding',
        'CustomResourceDefinition',
        'CustomResourceDefinition',
        'CustomResourceDefinition',
        'CustomResourceDefinition',
        'CustomResourceDefinition',
        'Deployment',
        'Deployment',
        'PodDisruptionBudget',
        'Provider',
        'Provider',
        'Role',
        'RoleBinding',
        'Service',
        'Service',
        'ServiceAccount',
      ]);
      await expectAllAccepted(rendered, ns.name);

      // The CRDs were updated in place (same objects), now part of the release and kept on uninstall.
      expect(await crdUids()).toEqual(uidsBefore);
      for (const name of CRDS) {
        const crd = await crdApi.readCustomResourceDefinition({ name });
        expect([name, crd.metadata?.annotations?.[KEEP], crd.metadata?.annotations?.['meta.helm.sh/release-namespace']]).toEqual([
          name,
          'keep',
          ns.name,
        ]);
      }
      // Two Deployments, one container each: `latchkey controller` (2 replicas, every one active on its
      // shard) and `latchkey server`; each selects its own pods, and so does each one's Service
      // (`<release>` the servers', `<release>-controller` the controllers': test/chart/services.unit.test.ts).
      for (const component of COMPONENTS) {
        const service = await core.readNamespacedService({
          namespace: ns.name,
          name: component === 'server' ? RELEASE : `${RELEASE}-controller`,
        });
        const d = await readDeployment(ns.name, component);
        const containers = d.spec!.template.spec!.containers;
        expect(containers.map((c) => [c.name, c.args])).toEqual([[component, [component]]]);
        expect(containers[0].securityContext).toMatchObject({
          runAsNonRoot: true,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        });
        expect([component, d.spec!.replicas]).toEqual([component, component === 'controller' ? 2 : 1]);
        const selector = d.spec!.selector.matchLabels!;
        expect(selector['app.kubernetes.io/component']).toBe(component);
        expect([component, service.spec!.selector]).toEqual([component, selector]);
        // Node's heap limit: 75% of this container's own memory limit (768Mi and 1Gi by default), and a small young generation.
        const limitMiB = { controller: 768, server: 1024 }[component];
        expect([component, envOf(d, component).NODE_OPTIONS]).toEqual([
          component,
          `--max-old-space-size=${(limitMiB * 3) / 4} --max-semi-space-size=4`,
        ]);
        // Watch every namespace: the variable is there, empty (the API server drops an empty value).
        expect(Object.keys(envOf(d, component))).toContain('LATCHKEY_WATCH_NAMESPACES');
        expect(envOf(d, component).LATCHKEY_WATCH_NAMESPACES ?? '').toBe('');
      }
      // The controllers' budget keeps one of the two; the single server has none.
      const budget = rendered.find((o) => o.kind === 'PodDisruptionBudget') as KubernetesObject & {
        spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } };
      };
      expect([budget.metadata!.name, budget.spec.maxUnavailable, budget.spec.selector.matchLabels['app.kubernetes.io/component']]).toEqual([
        `${RELEASE}-controller`,
        1,
        'controller',
      ]);
      const trello = (await custom.getClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: 'providers',
        name: 'trello',
      })) as KubernetesObject;
      expect(trello.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
    },
    HELM_TEST_TIMEOUT,
  );

  it('grants cluster-wide only what the processes need (SubjectAccessReview of the ServiceAccount)', async () => {
    const authz = kc.makeApiClient(AuthorizationV1Api);
    const sa = `system:serviceaccount:${ns.name}:${RELEASE}`;
    const can = async (attrs: {
      verb: string;
      resource: string;
      group?: string;
      subresource?: string;
      namespace?: string;
      name?: string;
    }) =>
      (
        await authz.createSubjectAccessReview({
          body: {
            spec: {
              user: sa,
              groups: ['system:serviceaccounts', `system:serviceaccounts:${ns.name}`, 'system:authenticated'],
              resourceAttributes: {
                group: attrs.group ?? '',
                resource: attrs.resource,
                subresource: attrs.subresource,
                verb: attrs.verb,
                namespace: attrs.namespace,
                name: attrs.name,
              },
            },
          },
        })
      ).status!.allowed;
    const checks: Array<[string, Parameters<typeof can>[0], boolean]> = [
      ['watch Connections everywhere', { verb: 'watch', group: GROUP, resource: 'connections' }, true],
      ['list Secrets in any namespace (rbac.namespaces empty)', { verb: 'list', resource: 'secrets', namespace: 'kube-system' }, true],
      ['update Provider status', { verb: 'update', group: GROUP, resource: 'providers', subresource: 'status', name: 'x' }, true],
      ['create the leader Lease', { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: ns.name }, true],
      ['update a Provider spec', { verb: 'update', group: GROUP, resource: 'providers', name: 'x' }, false],
      ['create a Provider', { verb: 'create', group: GROUP, resource: 'providers' }, false],
      ['update an Integration spec', { verb: 'update', group: GROUP, resource: 'integrations', namespace: 'default', name: 'x' }, false],
      // The controller's shard label (a merge patch of the label alone); update is granted already.
      ['patch a Secret', { verb: 'patch', resource: 'secrets', namespace: 'default', name: 'x' }, true],
      ['patch a Provider', { verb: 'patch', group: GROUP, resource: 'providers', name: 'x' }, false],
      ['deletecollection Secrets', { verb: 'deletecollection', resource: 'secrets', namespace: 'default' }, false],
      ['delete a CRD', { verb: 'delete', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: CRDS[0] }, false],
      ['create a Pod', { verb: 'create', resource: 'pods', namespace: ns.name }, false],
      ['list Namespaces', { verb: 'list', resource: 'namespaces' }, false],
      ['watch ConfigMaps (the webhook outbox)', { verb: 'watch', resource: 'configmaps', namespace: 'default' }, true],
      ['impersonate users', { verb: 'impersonate', resource: 'users' }, false],
      // Workloads' ServiceAccount tokens (docs/workloads.md): reviewed, and their rights asked of RBAC.
      ['create TokenReviews', { verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews' }, true],
      ['create SubjectAccessReviews', { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' }, true],
      ['list RoleBindings', { verb: 'list', group: 'rbac.authorization.k8s.io', resource: 'rolebindings', namespace: 'default' }, false],
      ['create ServiceAccount tokens', { verb: 'create', resource: 'serviceaccounts', subresource: 'token', namespace: 'default' }, false],
      ['escalate ClusterRoles', { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, false],
      ['bind ClusterRoles', { verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, false],
      // CredentialBindings (credentialBindings.enabled, cluster-wide): watched, status written; namespaces read by name only.
      ['watch CredentialBindings everywhere', { verb: 'watch', group: GROUP, resource: 'credentialbindings' }, true],
      [
        'update CredentialBinding status',
        { verb: 'update', group: GROUP, resource: 'credentialbindings', subresource: 'status', namespace: 'default', name: 'x' },
        true,
      ],
      [
        'update a CredentialBinding spec',
        { verb: 'update', group: GROUP, resource: 'credentialbindings', namespace: 'default', name: 'x' },
        false,
      ],
      ['get a Namespace (its labels)', { verb: 'get', resource: 'namespaces', name: 'default' }, true],
      // Rollout restarts are off by default.
      ['patch a Deployment', { verb: 'patch', group: 'apps', resource: 'deployments', namespace: 'default', name: 'x' }, false],
    ];
    const answers = [];
    for (const [what, attrs] of checks) answers.push([what, await can(attrs)]);
    expect(answers).toEqual(checks.map(([what, , allowed]) => [what, allowed]));
  });

  it(
    'helm upgrade applies a changed value to the Deployment',
    async () => {
      await helm.ok([
        'upgrade',
        RELEASE,
        CHART,
        '-n',
        ns.name,
        '--set',
        'catalog.include={trello}',
        '--set',
        'server.replicas=2',
        '--set',
        'config.logLevel=debug',
      ]);
      const status = JSON.parse(await helm.ok(['status', RELEASE, '-n', ns.name, '-o', 'json'])) as {
        version: number;
        info: { status: string };
      };
      expect([status.version, status.info.status]).toEqual([2, 'deployed']);
      const server = await readDeployment(ns.name, 'server');
      const controller = await readDeployment(ns.name, 'controller');
      expect(server.spec!.replicas).toBe(2);
      expect([envOf(controller, 'controller').LATCHKEY_LOG_LEVEL, envOf(server, 'server').LATCHKEY_LOG_LEVEL]).toEqual(['debug', 'debug']);
      // server.replicas > 1 brings the server's PodDisruptionBudget; a provider dropped from the catalog stays
      // (crds.keep keeps the catalog: a rollback to the first revision must not delete it), no longer the release's.
      expect(count(rendered, 'PodDisruptionBudget')).toBe(1);
      const upgraded = await helm.manifest(RELEASE, ns.name);
      expect(
        upgraded
          .filter((o) => o.kind === 'PodDisruptionBudget')
          .map((o) => o.metadata!.name)
          .sort(),
      ).toEqual([`${RELEASE}-controller`, `${RELEASE}-server`]);
      await expectAllAccepted(upgraded, ns.name);
      const openai = { apiVersion: `${GROUP}/${VERSION}`, kind: 'Provider', metadata: { name: 'openai' } };
      expect(upgraded.filter((o) => o.kind === 'Provider').map((o) => o.metadata!.name)).toEqual(['trello']);
      expect(await readBack(kc, openai, ns.name)).toBeDefined();
    },
    HELM_TEST_TIMEOUT,
  );

  it(
    'helm uninstall removes the release objects and keeps the CRDs',
    async () => {
      // Guard: with crds.keep the live CRDs carry the keep policy; otherwise stop before deleting them.
      expect(await crdsKeptOnUninstall()).toBe(true);
      // What the release holds now (after the upgrade case, when it ran).
      const current = await helm.manifest(RELEASE, ns.name);
      await helm.ok(['uninstall', RELEASE, '-n', ns.name]);
      installed = false;
      await expectAllGone(
        current.filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'Provider'),
        ns.name,
      );
      // The catalog stays with the CRDs (crds.keep), for the Connections kept with them.
      for (const provider of current.filter((o) => o.kind === 'Provider')) expect(await readBack(kc, provider, ns.name)).toBeDefined();
      await deleteKeptProviders([...current, { apiVersion: `${GROUP}/${VERSION}`, kind: 'Provider', metadata: { name: 'openai' } }]);
      expect(await crdUids()).toEqual(uidsBefore);
      expect((await helm.ok(['list', '-n', ns.name, '-q'])).trim()).toBe('');
    },
    HELM_TEST_TIMEOUT,
  );
});

describe('rbac.namespaces naming a namespace that does not exist', () => {
  it(
    'helm install stops before creating anything, naming the namespace and how to create it',
    async () => {
      const rel = await createTestNamespace(kc, 'chart-missing');
      const missing = `latchkey-missing-${randomBytes(4).toString('hex')}`;
      try {
        const r = await helm.run(installWithoutCrdsOrCatalog(RELEASE, rel.name, [rel.name, missing]));
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain(`namespace "${missing}" (in rbac.namespaces or rbac.clusterEventsNamespace) does not exist`);
        expect(r.stderr).toContain(`create it first (kubectl create namespace ${missing})`);
        // Refused while rendering: no release recorded, no pods started (the release namespace itself may be listed).
        expect((await helm.run(['status', RELEASE, '-n', rel.name])).code).not.toBe(0);
        expect((await apps.listNamespacedDeployment({ namespace: rel.name })).items).toEqual([]);
      } finally {
        await rel.delete();
      }
    },
    HELM_TEST_TIMEOUT,
  );
});

describe('ci/production-values.yaml, limited to two namespaces', () => {
  const SM_CRD = 'servicemonitors.monitoring.coreos.com';
  let rel: Namespace;
  let appA: Namespace;
  let appB: Namespace;
  let installed = false;
  let createdServiceMonitorCrd = false;
  let rendered: KubernetesObject[];

  beforeAll(async () => {
    [rel, appA, appB] = await Promise.all([
      createTestNamespace(kc, 'chart-prod'),
      createTestNamespace(kc, 'chart-shop'),
      createTestNamespace(kc, 'chart-bill'),
    ]);
    // The production values enable a ServiceMonitor. Without the Prometheus Operator, the subset
    // of its CRD written for kubeconform (test/chart/schemas) makes the API server check it.
    try {
      await crdApi.readCustomResourceDefinition({ name: SM_CRD });
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      const { installCrds } = await import('../../dev/apply.js');
      await installCrds(kc, join(REPO_ROOT, 'test/chart/schemas/servicemonitor-subset.crd.yaml'));
      createdServiceMonitorCrd = true;
    }
    // Installed here, so that each case can run alone.
    await helm.ok([
      'install',
      RELEASE,
      CHART,
      '-n',
      rel.name,
      '-f',
      join(CHART, 'ci/production-values.yaml'),
      '--set',
      `rbac.namespaces={${appA.name},${appB.name}}`,
      '--set',
      'crds.install=false',
      // Other suites on the same control plane apply shipped Providers of their own (the catalog is cluster-wide).
      '--take-ownership',
    ]);
    installed = true;
    rendered = await helm.manifest(RELEASE, rel.name);
  }, HELM_TEST_TIMEOUT);
  afterAll(async () => {
    if (installed) await helm.run(['uninstall', RELEASE, '-n', rel.name]);
    await deleteKeptProviders(rendered ?? []);
    if (createdServiceMonitorCrd) await crdApi.deleteCustomResourceDefinition({ name: SM_CRD }).catch(() => undefined);
    await Promise.all([rel, appA, appB].map((n) => n.delete()));
  });

  it(
    'helm install: every rendered object, the whole provider catalog included, is accepted',
    async () => {
      const catalogProviders = readdirSync(join(CHART, 'catalog'))
        .filter((f) => f.endsWith('.yaml'))
        .reduce((n, f) => n + (readFileSync(join(CHART, 'catalog', f), 'utf8').match(/^kind: Provider$/gm)?.length ?? 0), 0);
      expect(catalogProviders).toBeGreaterThan(0);
      expect(count(rendered, 'Provider')).toBe(catalogProviders);
      expect(count(rendered, 'CustomResourceDefinition')).toBe(0);
      for (const kind of ['Ingress', 'NetworkPolicy', 'ServiceMonitor', 'ServiceAccount']) {
        expect([kind, count(rendered, kind)]).toEqual([kind, 1]);
      }
      // A Deployment, a PodDisruptionBudget and a Service per component.
      for (const kind of ['PodDisruptionBudget', 'Deployment', 'Service']) expect([kind, count(rendered, kind)]).toEqual([kind, 2]);
      // Cluster-wide: the Providers grant, the token and access reviews, and get on the listed Namespaces
      // (by name); the rest is a Role per listed namespace (Latchkey's and the CredentialBindings').
      expect(rendered.filter((o) => o.kind === 'ClusterRoleBinding').map((o) => o.metadata!.name)).toEqual([
        `${rel.name}-${RELEASE}-providers`,
        `${rel.name}-${RELEASE}-reviews`,
        `${rel.name}-${RELEASE}-binding-namespaces`,
      ]);
      const namespacesRole = rendered.find(
        (o) => o.kind === 'ClusterRole' && o.metadata!.name === `${rel.name}-${RELEASE}-binding-namespaces`,
      ) as unknown as {
        rules: Array<{ resources: string[]; resourceNames?: string[]; verbs: string[] }>;
      };
      expect(namespacesRole.rules).toEqual([
        { apiGroups: [''], resources: ['namespaces'], resourceNames: [appA.name, appB.name], verbs: ['get'] },
      ]);
      expect(
        rendered
          .filter((o) => o.kind === 'RoleBinding')
          .map((o) => o.metadata!.namespace)
          .sort(),
      ).toEqual([appA.name, appA.name, appB.name, appB.name, rel.name].sort());
      await expectAllAccepted(rendered, rel.name);
      for (const component of COMPONENTS) {
        const d = await readDeployment(rel.name, component);
        expect([component, d.spec!.replicas]).toEqual([component, 3]);
        expect(envOf(d, component).LATCHKEY_WATCH_NAMESPACES).toBe(`${appA.name},${appB.name}`);
        expect(envOf(d, component).LATCHKEY_PUBLIC_BASE_URL).toBe('https://connect.example.com');
      }
    },
    HELM_TEST_TIMEOUT,
  );

  it(
    'helm uninstall removes every object, in the listed namespaces too, but the kept catalog',
    async () => {
      await helm.ok(['uninstall', RELEASE, '-n', rel.name]);
      installed = false;
      await expectAllGone(
        rendered.filter((o) => o.kind !== 'Provider'),
        rel.name,
      );
      // The catalog is kept (crds.keep), as the Connections using it are.
      const providers = rendered.filter((o) => o.kind === 'Provider');
      expect(providers.length).toBeGreaterThan(0);
      for (const provider of providers.slice(0, 5)) expect(await readBack(kc, provider, rel.name)).toBeDefined();
    },
    HELM_TEST_TIMEOUT,
  );
});

describe('RBAC: the server and the controller as the chart ServiceAccount, limited to one namespace', () => {
  const run8 = randomBytes(4).toString('hex');
  const providerName = `chart-rbac-${run8}`;
  const podName = `chart-rbac-${run8}`;
  let rel: Namespace;
  let app: Namespace;
  let other: Namespace;
  let env: TestEnvironment;
  let sa: string;
  let saKc: KubeConfig;
  let running: Running | undefined;
  const warnings: string[] = [];

  beforeAll(async () => {
    [rel, app, other] = await Promise.all([
      createTestNamespace(kc, 'chart-rbac'),
      createTestNamespace(kc, 'chart-app'),
      createTestNamespace(kc, 'chart-other'),
    ]);
    await helm.ok(installWithoutCrdsOrCatalog(RELEASE, rel.name, [app.name]));
    sa = `system:serviceaccount:${rel.name}:${RELEASE}`;
    saKc = impersonating(kc, sa);
    env = await platformObjects(kc, app.name, providerName, 'Chart RBAC');
    await core.createNamespacedSecret({
      namespace: other.name,
      body: { metadata: { name: 'not-yours', labels: { [LABELS.watch]: 'true' } }, stringData: { secretKey: 'x' } },
    });
  });
  afterAll(async () => {
    await running?.stop();
    await deleteProvider(kc, providerName);
    await helm.run(['uninstall', RELEASE, '-n', rel.name]);
    await Promise.all([rel, app, other].map((n) => n.delete()));
  });

  it('the impersonating client is the ServiceAccount', async () => {
    const review = await saKc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(sa);
    expect(review.status?.userInfo?.groups).toEqual(
      expect.arrayContaining(['system:serviceaccounts', `system:serviceaccounts:${rel.name}`]),
    );
  });

  it('runLatchkey (server + controller) with the chart settings syncs its caches, leads, reconciles and imports a connection', async () => {
    // The settings the chart gives the containers, plus what the pod would get from the downward API.
    const chartEnv = envOf(await readDeployment(rel.name, 'server'), 'server');
    // The same settings in both Deployments; only the heap limit follows each container's memory limit.
    const withoutHeap = (env: Record<string, string | undefined>) =>
      Object.fromEntries(Object.entries(env).filter(([k]) => k !== 'NODE_OPTIONS'));
    expect(withoutHeap(envOf(await readDeployment(rel.name, 'controller'), 'controller'))).toEqual(withoutHeap(chartEnv));
    const config = loadConfig({
      ...Object.fromEntries(Object.entries(chartEnv).filter(([, v]) => v !== undefined)),
      POD_NAME: podName,
      POD_NAMESPACE: rel.name,
      LATCHKEY_LEASE_NAMESPACE: rel.name,
      LATCHKEY_HTTP_PORT: '0',
      LATCHKEY_CONTROLLER_PORT: '0',
      LATCHKEY_LOG_LEVEL: 'warn',
    });
    expect(config.watchNamespaces).toEqual([app.name]);
    const logger = createLogger('warn', {}, { write: (line: string) => void warnings.push(line) });

    let timer: NodeJS.Timeout | undefined;
    running = await Promise.race([
      runLatchkey({ config, logger, kc: saKc, components: ['server', 'controller'] }),
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`caches did not sync as ${sa}:\n${warnings.join('')}`)), 60_000)),
      ),
    ]).finally(() => clearTimeout(timer));
    expect(running.ctx.caches.hasSynced).toBe(true);

    // Leader election: the Lease in the release namespace, held by this "pod".
    await eventually(() => running!.controller!.controller.isLeader, 30_000);
    const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: rel.name, name: config.leaseName });
    expect(lease.spec?.holderIdentity).toBe(podName);

    // The controller wrote the status of the Provider, the Integration and the Environment.
    const readyOf = async (plural: string, namespace?: string, name = '') => {
      const o = (
        namespace
          ? await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural, namespace, name })
          : await custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural, name })
      ) as { status?: CommonStatus };
      return o.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    };
    expect(await eventually(() => readyOf('providers', undefined, providerName), 30_000)).toBe('True');
    expect(await eventually(() => readyOf('integrations', app.name, 'keys'), 30_000)).toBe('True');
    expect(await eventually(() => readyOf('environments', app.name, env.name), 30_000)).toBe('True');

    // The REST API: import, read back, delete.
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${running!.server!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${env.secretKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const imported = await eventually(async () => {
      const r = await call('POST', '/connections', {
        provider_config_key: 'keys',
        connection_id: 'user-1',
        credentials: { type: 'API_KEY', apiKey: 'k-123' },
      });
      return r.status === 401 ? undefined : r; // the key index may lag the Environment by a moment
    }, 20_000);
    expect([imported.status, imported.body.connection_id]).toEqual([201, 'user-1']);
    const fetched = await call('GET', '/connections/user-1?provider_config_key=keys');
    expect([fetched.status, fetched.body.credentials]).toEqual([200, { type: 'API_KEY', apiKey: 'k-123' }]);
    const secrets = await core.listNamespacedSecret({ namespace: app.name, labelSelector: `${LABELS.managedBy}=${LABELS.managedByValue}` });
    expect(secrets.items).toHaveLength(1);
    const deleted = await call('DELETE', '/connections/user-1?provider_config_key=keys');
    expect([deleted.status, deleted.body]).toEqual([200, { success: true }]);
    expect((await call('GET', '/connections/user-1?provider_config_key=keys')).status).toBe(404);
  });

  it('the other calls the processes make work as the ServiceAccount in the granted namespace', async () => {
    const store = running!.ctx;
    const { resource } = await store.connections.createConnection({
      namespace: app.name,
      spec: {
        integration: 'keys',
        provider: providerName,
        connectionId: 'direct',
        authMode: 'API_KEY',
        metadata: {},
        connectionConfig: {},
      },
      credentials: { type: 'API_KEY', apiKey: 'k-456' },
    });
    const name = resource.metadata.name;
    await store.connections.updateConnection(app.name, name, (c) => ({ ...c, spec: { ...c.spec, metadata: { plan: 'pro' } } }));
    await store.connections.updateConnectionStatus(app.name, name, ConnectionStatusWriter.LastFetched, (s) => ({
      ...s,
      lastFetchedAt: new Date().toISOString(),
    }));
    await store.connections.updateCredentials(app.name, name, (c) => ({ ...c, apiKey: 'k-789' }));
    const events = new ConnectionEvents(saKc, 'chart-test');
    const logId = await events.record(store.caches.connections.get(name, app.name)!, {
      type: 'Warning',
      reason: 'RbacCheck',
      message: 'recorded as the ServiceAccount',
    });
    expect((await events.get(app.name, logId)).reason).toBe('RbacCheck');
    const leases = new Leases(saKc);
    const lock = `${name}-refresh`;
    expect((await leases.tryAcquire(app.name, lock, podName, 30)).acquired).toBe(true);
    await leases.release(app.name, lock, podName);
    await leases.delete(app.name, lock);
    const flows = new FlowRecords(saKc);
    const expires = Date.now() + 60_000;
    expect(await flows.markUsed(app.name, `flow-${run8}`, expires)).toBe(true);
    expect(await flows.markUsed(app.name, `flow-${run8}`, expires)).toBe(false);
    await flows.putRequestSecret(app.name, `flow-${run8}`, { token: 't', tokenSecret: 's' }, expires);
    expect(await flows.takeRequestSecret(app.name, `flow-${run8}`)).toEqual({ token: 't', tokenSecret: 's' });
    expect(await flows.sweepExpired([app.name], expires + 60_000)).toBeGreaterThanOrEqual(1);
    const outbox = new WebhookOutbox(saKc);
    await outbox.enqueue(app.name, { id: `msg_${run8}`, environment: env.name, body: '{}' }, Date.now());
    await outbox.list([app.name]);
    await store.connections.deleteConnection(app.name, name);
    // Nothing the processes did so far was refused.
    expect(warnings.filter((l) => /forbidden|\b403\b/i.test(l))).toEqual([]);
  });

  it('calls outside the granted rules are forbidden (403)', async () => {
    const saCore = saKc.makeApiClient(CoreV1Api);
    const saCustom = saKc.makeApiClient(CustomObjectsApi);
    const saCoordination = saKc.makeApiClient(CoordinationV1Api);
    const saCrds = saKc.makeApiClient(ApiextensionsV1Api);
    const dryRun = 'All'; // authorization comes first: a granted write would only be simulated
    const statusOfCall = async (call: () => Promise<unknown>) => {
      try {
        await call();
        return 'allowed';
      } catch (err) {
        return statusOf(err) ?? String(err);
      }
    };
    // Positive control: the same client reads the granted namespace.
    expect(await statusOfCall(() => saCore.listNamespacedSecret({ namespace: app.name }))).toBe('allowed');

    const provider = (await custom.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'providers',
      name: providerName,
    })) as KubernetesObject & { spec: object };
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['read a Secret in a namespace not listed', () => saCore.readNamespacedSecret({ namespace: other.name, name: 'not-yours' })],
      ['list Secrets in a namespace not listed', () => saCore.listNamespacedSecret({ namespace: other.name })],
      ['list Secrets cluster-wide', () => saCore.listSecretForAllNamespaces({})],
      [
        'list Connections in a namespace not listed',
        () => saCustom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: other.name, plural: 'connections' }),
      ],
      ['list Connections cluster-wide', () => saCustom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'connections' })],
      [
        'create a Connection in a namespace not listed',
        () =>
          saCustom.createNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: other.name,
            plural: 'connections',
            dryRun,
            body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Connection', metadata: { name: 'x' }, spec: {} },
          }),
      ],
      [
        'write a Provider spec',
        () =>
          saCustom.replaceClusterCustomObject({
            group: GROUP,
            version: VERSION,
            plural: 'providers',
            name: providerName,
            dryRun,
            body: { ...provider, spec: { ...provider.spec, displayName: 'changed' } },
          }),
      ],
      [
        'delete a Provider',
        () => saCustom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providers', name: providerName, dryRun }),
      ],
      ['delete a CRD', () => saCrds.deleteCustomResourceDefinition({ name: 'connections.latchkey.dev', dryRun })],
      [
        'create a Lease in a namespace not listed',
        () =>
          saCoordination.createNamespacedLease({
            namespace: other.name,
            dryRun,
            body: { metadata: { name: 'x' }, spec: {} },
          }),
      ],
      // Leases of the release namespace are the controller's to update: every replica renews its own shard
      // Lease (latchkey-shard-<pod>), a name RBAC cannot list in advance.
      [
        'update a Lease in a namespace not listed',
        () =>
          saCoordination.replaceNamespacedLease({
            namespace: other.name,
            name: 'someone-else',
            dryRun,
            body: { metadata: { name: 'someone-else' }, spec: {} },
          }),
      ],
      [
        'create an Event in a namespace not listed',
        () =>
          saCore.createNamespacedEvent({
            namespace: 'default',
            dryRun,
            body: { metadata: { name: 'x' }, involvedObject: { kind: 'Provider', name: providerName } },
          }),
      ],
      [
        'delete all Secrets of the granted namespace at once',
        () => saCore.deleteCollectionNamespacedSecret({ namespace: app.name, dryRun }),
      ],
      [
        'create a Pod in the granted namespace',
        () =>
          saCore.createNamespacedPod({
            namespace: app.name,
            dryRun,
            body: { metadata: { name: 'x' }, spec: { containers: [{ name: 'x', image: 'x' }] } },
          }),
      ],
    ];
    const results = [];
    for (const [what, call] of calls) results.push([what, await statusOfCall(call)]);
    expect(results).toEqual(calls.map(([what]) => [what, 403]));
  });
});
