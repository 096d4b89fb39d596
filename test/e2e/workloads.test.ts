/**
 * Workloads in the cluster (docs/workloads.md) on a real node: pods of an application, run by kubelet
 * from the Latchkey image (it has node; the pods reach nothing but the Service and the host's peers).
 * - A pod sends its projected ServiceAccount token (audience `latchkey`) to the proxy through the
 *   Service: 200 with the chart's `latchkey-proxy-user` ClusterRole bound to its ServiceAccount, 403
 *   for a ServiceAccount of the same namespace without a RoleBinding (the server's TokenReview and
 *   SubjectAccessReview against the node's API server).
 * - A pod mounting a CredentialBinding's Secret reads the connection's access token from the file,
 *   and the new one after `kubectl latchkey refresh` (the plugin from dist/, with the test's kubeconfig).
 * - A binding from a namespace the Environment's selector leaves out writes nothing: no Secret, a
 *   `NotAllowed` condition.
 * The pods print a hash of what they read, never a token.
 *
 * Runs by `npm run test:e2e` (jest.e2e.config.js); reported skipped, with the reason, where a node cannot start.
 */
import { CustomObjectsApi, RbacAuthorizationV1Api, type CoreV1Api, type V1Pod, type V1PodSpec } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { createEnvironment, type TestEnvironment } from '../../dev/fixtures.js';
import { connectionObjectName } from '../../src/k8s/names.js';
import { GROUP, VERSION, type CredentialBindingResource } from '../../src/k8s/resources.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';
import { e2eImage } from './global-setup.js';
import { describeOnNode, logAs, startNodeBed, until, type NodeBed } from './support/node-bed.js';
import { applyOidcIntegration, expectEachRefreshOnce, startOidcPeer, type OidcPeer } from './support/oidc-peer.js';
import { installRelease, restClient, serviceUrlOf } from './support/release.js';

const APP_NS = 'shop';
/** Selected by the Environment's credentialBindings.namespaceSelector (by a label the platform team sets). */
const BOUND_NS = 'billing';
/** Not selected: a binding here is refused. */
const OTHER_NS = 'elsewhere';
const BIND_LABEL = { 'e2e.latchkey.dev/may-bind': 'yes' };
const CLIENT = { clientId: 'e2e-client', clientSecret: 'e2e-client-secret-value' };
const CONNECTION = 'user-42';
const CASE_MS = 600_000;

let bed: NodeBed;
let core: CoreV1Api;
let custom: CustomObjectsApi;
let peer: OidcPeer;
let upstream: Upstream;
let env: TestEnvironment;
let serviceUrl: string;

const log = logAs('workloads');
const rest = restClient(() => ({ url: serviceUrl, secretKey: env.secretKey }));
/** What the pods print of a token: a hash (a token never goes into a log). */
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 16);

async function accessToken(): Promise<string> {
  const r = await rest('GET', `/connections/${CONNECTION}?provider_config_key=oidc`);
  expect(r.status).toBe(200);
  return r.body.credentials.access_token as string;
}

/** A pod of the Latchkey image running `script` (an ES module) with node, as the image's user. */
function nodePod(name: string, namespace: string, script: string, spec: Partial<V1PodSpec>): Promise<V1Pod> {
  return core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        restartPolicy: 'Never',
        ...spec,
        containers: [
          {
            name: 'app',
            image: e2eImage(),
            imagePullPolicy: 'Never',
            command: ['node', '--input-type=module', '-e', script],
            env: [{ name: 'LATCHKEY_URL', value: serviceUrl }],
            volumeMounts: spec.volumes?.map((v) => ({ name: v.name, mountPath: `/mnt/${v.name}`, readOnly: true })),
          },
        ],
      },
    },
  });
}

const podLog = (name: string, namespace: string) => core.readNamespacedPodLog({ name, namespace });

/** The last line a pod printed once it has ended (its logs in the error when it failed). */
async function resultOf(name: string, namespace: string): Promise<string> {
  const pod = await until(`pod ${namespace}/${name} to end`, async () => {
    const p = await core.readNamespacedPod({ name, namespace });
    return ['Succeeded', 'Failed'].includes(p.status?.phase ?? '') && p;
  });
  const out = await podLog(name, namespace);
  if (pod.status!.phase !== 'Succeeded') throw new Error(`pod ${namespace}/${name} failed:\n${out}`);
  return out.trim().split('\n').pop()!;
}

/** Calls the proxy with the pod's projected ServiceAccount token; prints the status and the error's code and message. */
const PROXY_CALL = `
import { readFileSync } from 'node:fs';
const token = readFileSync('/mnt/latchkey-token/token', 'utf8');
const res = await fetch(process.env.LATCHKEY_URL + '/proxy/items?from=pod', {
  headers: { authorization: 'Bearer ' + token, 'connection-id': '${CONNECTION}', 'provider-config-key': 'oidc' },
});
const body = await res.json().catch(() => ({}));
console.log(JSON.stringify({ status: res.status, error: body.error }));
`;

/** Prints a hash of the bound Secret's file every second (kubelet rewrites the file when the Secret changes). */
const TOKEN_WATCH = `
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
setInterval(() => {
  const token = readFileSync('/mnt/bound/token', 'utf8');
  console.log(token ? createHash('sha256').update(token).digest('hex').slice(0, 16) : 'empty');
}, 1000);
`;

async function bind(namespace: string, name: string): Promise<void> {
  await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: 'credentialbindings',
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'CredentialBinding',
      metadata: { name },
      spec: {
        connectionRef: { namespace: APP_NS, integration: 'oidc', connectionId: CONNECTION },
        target: { template: { token: '${accessToken}' } },
      },
    },
  });
}

/** The binding once its conditions are computed for its generation. */
const bindingOf = (namespace: string, name: string) =>
  until(`CredentialBinding ${namespace}/${name} synced or refused`, async () => {
    const b = (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: 'credentialbindings',
      name,
    })) as CredentialBindingResource;
    const synced = b.status?.conditions?.find((c) => c.type === 'Synced');
    return synced && synced.observedGeneration === b.metadata.generation && synced.status !== 'Unknown' && b;
  });

describeOnNode('workloads on a local node: ServiceAccount tokens, bound Secrets', () => {
  beforeAll(async () => {
    bed = await startNodeBed(log, [e2eImage()]);
    core = bed.core;
    custom = bed.kc.makeApiClient(CustomObjectsApi);
    peer = await startOidcPeer(bed.node, [CLIENT], 3600);
    upstream = await startUpstream({ host: bed.node.nodeAddress });

    // One of each: this file is about the workloads, not the release's availability.
    const took = await installRelease(bed, peer.ca.caCert, { image: e2eImage(), controllers: 1, servers: 1 });
    log(`helm install --wait took ${took} ms`);
    serviceUrl = await serviceUrlOf(core);

    for (const [name, labels] of [
      [APP_NS, {}],
      [BOUND_NS, BIND_LABEL],
      [OTHER_NS, {}],
    ] as const)
      await core.createNamespace({ body: { metadata: { name, labels } } });
    env = await createEnvironment(bed.kc, APP_NS, { credentialBindings: { namespaceSelector: { matchLabels: BIND_LABEL } } });
    await applyOidcIntegration(bed.kc, APP_NS, peer, `${upstream.origin}/api`, CLIENT);
    const tokens = await peer.oidc.mintTokens({ clientId: CLIENT.clientId, accountId: CONNECTION });
    await until('the import to be accepted', async () => {
      const r = await rest('POST', '/connections', {
        provider_config_key: 'oidc',
        connection_id: CONNECTION,
        credentials: {
          type: 'OAUTH2',
          access_token: tokens.accessToken,
          refresh_token: tokens.refreshToken,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        },
      });
      return r.status === 201 && r;
    });
  }, 1_800_000);

  afterAll(async () => {
    await Promise.all([peer?.close(), upstream?.close()]);
    await bed?.stop();
  }, 120_000);

  test(
    'a pod with a projected ServiceAccount token calls the proxy: 200 with a RoleBinding to latchkey-proxy-user, 403 without one',
    async () => {
      for (const name of ['reporter', 'stranger'])
        await core.createNamespacedServiceAccount({ namespace: APP_NS, body: { metadata: { name } } });
      await bed.kc.makeApiClient(RbacAuthorizationV1Api).createNamespacedRoleBinding({
        namespace: APP_NS,
        body: {
          metadata: { name: 'reporter-proxy' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'latchkey-proxy-user' },
          subjects: [{ kind: 'ServiceAccount', name: 'reporter', namespace: APP_NS }],
        },
      });
      const tokenVolume = {
        name: 'latchkey-token',
        projected: { sources: [{ serviceAccountToken: { audience: 'latchkey', expirationSeconds: 3600, path: 'token' } }] },
      };
      for (const sa of ['reporter', 'stranger'])
        await nodePod(`${sa}-call`, APP_NS, PROXY_CALL, { serviceAccountName: sa, volumes: [tokenVolume] });

      const allowed = JSON.parse(await resultOf('reporter-call', APP_NS)) as { status: number };
      expect(allowed).toEqual({ status: 200 });
      const seen = upstream.requests.find((r) => r.url === '/api/items?from=pod');
      expect(seen?.headers.authorization).toBe(`Bearer ${await accessToken()}`);

      const denied = JSON.parse(await resultOf('stranger-call', APP_NS)) as { status: number; error: { code: string; message: string } };
      expect([denied.status, denied.error.code]).toEqual([403, 'forbidden']);
      // Names what would allow it, as `kubectl auth can-i` asks it.
      expect(denied.error.message).toContain('connections/proxy');
      expect(denied.error.message).toContain(APP_NS);
      expect(upstream.requests.filter((r) => r.url === '/api/items?from=pod')).toHaveLength(1);
    },
    CASE_MS,
  );

  test(
    "a pod mounting a CredentialBinding's Secret reads the access token, and the new one after kubectl latchkey refresh",
    async () => {
      await bind(BOUND_NS, 'oidc-token');
      const binding = await bindingOf(BOUND_NS, 'oidc-token');
      expect(binding.status!.conditions!.filter((c) => ['Ready', 'Synced'].includes(c.type)).map((c) => [c.type, c.status])).toEqual(
        expect.arrayContaining([
          ['Ready', 'True'],
          ['Synced', 'True'],
        ]),
      );
      await nodePod('token-reader', BOUND_NS, TOKEN_WATCH, { volumes: [{ name: 'bound', secret: { secretName: 'oidc-token' } }] });
      const first = await accessToken();
      const lastLine = async () => (await podLog('token-reader', BOUND_NS)).trim().split('\n').pop();
      await until('the pod to read the current token', async () => (await lastLine()) === hashOf(first));

      // An operator asks for a refresh with the plugin (their kubeconfig and RBAC); the owning controller answers.
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          join(REPO_ROOT, 'dist/src/app/kubectl-latchkey.js'),
          'refresh',
          connectionObjectName('oidc', CONNECTION),
          '-n',
          APP_NS,
          '--kubeconfig',
          bed.node.kubeconfigPath,
        ],
        { timeout: 90_000 },
      );
      expect(stdout).toContain('Refreshed');
      const second = await accessToken();
      expect(second).not.toBe(first);
      // kubelet rewrites the mounted file (its sync period here is 10 s); the pod reads the new token.
      await until('the pod to read the refreshed token', async () => (await lastLine()) === hashOf(second), 120_000);
      expect(expectEachRefreshOnce(peer, [CONNECTION])).toEqual({ [CONNECTION]: 1 });
      const secret = await core.readNamespacedSecret({ name: 'oidc-token', namespace: BOUND_NS });
      expect(Object.keys(secret.data ?? {})).toEqual(['token']);
      expect(secret.metadata?.annotations?.['latchkey.dev/expires-at']).toBeDefined();
      await core.deleteNamespacedPod({ name: 'token-reader', namespace: BOUND_NS, gracePeriodSeconds: 0 });
    },
    CASE_MS,
  );

  test(
    'a binding from a namespace the Environment does not select writes nothing: no Secret, NotAllowed',
    async () => {
      await bind(OTHER_NS, 'oidc-token');
      const refused = await bindingOf(OTHER_NS, 'oidc-token');
      const conditions = Object.fromEntries(refused.status!.conditions!.map((c) => [c.type, [c.status, c.reason]]));
      expect([conditions.Ready, conditions.Synced]).toEqual([
        ['False', 'NotAllowed'],
        ['False', 'NotAllowed'],
      ]);
      const secrets = await core.listNamespacedSecret({ namespace: OTHER_NS });
      expect(secrets.items.map((s) => s.metadata!.name).filter((n) => !n!.startsWith('default-token'))).toEqual([]);
    },
    CASE_MS,
  );
});
