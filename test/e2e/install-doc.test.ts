/**
 * docs/install.md's local-node path, run as written: its `sh e2e` code blocks, read from the doc when
 * the test starts and run in document order in one bash session (doc-shell.ts): helm, `helm install`,
 * an Environment and an Integration, an import and its fetch through `kubectl port-forward`, a Connect
 * session whose `connect_link` an end user opens (Chromium here), `helm upgrade`, `helm uninstall` and "remove
 * everything". After the blocks that change something the test checks the cluster, so a doc that
 * drifts from the product fails here.
 *
 * Not run as written, done the same way instead: `npm ci` (this run uses node_modules), `npm run image`
 * (the suite's global setup ran the same script once: global-setup.ts) and
 * `npm run node -- --image IMAGE` (it rebuilds dist/ under this run and stays in the foreground):
 * startLocalNode() and importImage(IMAGE), all dev/start-node.ts does, IMAGE read from the doc and
 * checked to be what `npm run image` built; the shell gets the kubeconfig it would print.
 */
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type CoreV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { launchBrowser } from '../support/browser.js';
import { codeBlocks, DocShell, type BlockRun, type CodeBlock } from './doc-shell.js';
import { e2eImage } from './global-setup.js';
import { describeOnNode, logAs, startNodeBed, until, type NodeBed } from './support/node-bed.js';

const DOC = 'docs/install.md';
const doc = readFileSync(join(REPO_ROOT, DOC), 'utf8');
const blocks = codeBlocks(doc).filter((b) => b.info === 'sh e2e');
const all = blocks.map((b) => b.text).join('\n');

/** A value the doc's blocks must state, read from them (the test never restates the doc). */
function fromDoc(what: string, pattern: RegExp, text = all): string {
  const m = pattern.exec(text);
  if (!m) throw new Error(`${DOC} no longer has ${what} (${pattern})`);
  return m[1]!;
}
const RELEASE = fromDoc('a helm install', /^helm install (\S+) /m);
const RELEASE_NS = fromDoc("the release's namespace", /^helm install[^\n]*(?:\\\n[^\n]*)*--namespace (\S+)/m);
const APP_NS = fromDoc("the application's namespace", /^kubectl create namespace (\S+)/m);
const IMAGE = fromDoc('the image `npm run node -- --image` imports', /^npm run node -- --image (\S+)$/m, doc);
const PORT = Number(fromDoc('the port-forward to the Service', new RegExp(`port-forward svc/${RELEASE} (\\d+):`)));

const log = logAs('install-doc');

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

let bed: NodeBed;
let shell: DocShell;
let kc: KubeConfig;
let core: CoreV1Api;
let toolHomes: string;

/** What the blocks produced that later checks compare with. */
const seen: { imported?: { connection_id: string; credentials: unknown } } = {};

/** Names and labels of what Latchkey leaves in a namespace: ConfigMaps, Secrets and Leases. */
async function latchkeyObjectsIn(namespace: string): Promise<string[]> {
  const isOurs = (m: { name?: string; labels?: Record<string, string> } | undefined) =>
    m?.name?.startsWith('latchkey-') || Object.entries(m?.labels ?? {}).some(([k, v]) => k.includes('latchkey') || v === 'latchkey');
  const [cms, secrets, leases] = await Promise.all([
    core.listNamespacedConfigMap({ namespace }),
    core.listNamespacedSecret({ namespace }),
    kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace }),
  ]);
  return [
    ...cms.items.filter((o) => isOurs(o.metadata)).map((o) => `ConfigMap ${o.metadata!.name}`),
    ...secrets.items.filter((o) => isOurs(o.metadata)).map((o) => `Secret ${o.metadata!.name}`),
    ...leases.items.filter((o) => isOurs(o.metadata)).map((o) => `Lease ${o.metadata!.name}`),
  ];
}

/**
 * Checks after the blocks that match: each names a step the local-node path must have, and the last
 * test fails when one of them matched no block (the doc lost the step).
 */
const CHECKS: Array<{ step: string; matches: RegExp; check: (run: BlockRun, block: CodeBlock) => Promise<void> }> = [
  {
    step: 'the node is up',
    matches: /^kubectl get nodes/m,
    check: async (run) => expect(run.stdout).toMatch(/\bReady\b/),
  },
  {
    step: 'helm install: the pods Ready, the Service selecting the server pods only',
    matches: /^helm install /m,
    check: async () => {
      const apps = kc.makeApiClient(AppsV1Api);
      const deployments = (await apps.listNamespacedDeployment({ namespace: RELEASE_NS })).items;
      expect(deployments.map((d) => [d.metadata!.name, d.status?.readyReplicas === d.spec?.replicas]).sort()).toEqual([
        [`${RELEASE}-controller`, true],
        [`${RELEASE}-server`, true],
      ]);
      const slices = await kc
        .makeApiClient(DiscoveryV1Api)
        .listNamespacedEndpointSlice({ namespace: RELEASE_NS, labelSelector: `kubernetes.io/service-name=${RELEASE}` });
      const targets = slices.items.flatMap((s) => (s.endpoints ?? []).map((e) => e.targetRef?.name ?? ''));
      expect(targets.length).toBeGreaterThan(0);
      expect(targets.filter((t) => !t.startsWith(`${RELEASE}-server-`))).toEqual([]);
    },
  },
  {
    step: 'an import through the port-forward',
    matches: /\/connections" -d '/,
    check: async (run, block) => {
      const body = JSON.parse(fromDoc('the import body', /-d '([\s\S]*?)'/, block.text)) as { connection_id: string; credentials: unknown };
      expect(JSON.parse(run.stdout)).toMatchObject({ connection_id: body.connection_id });
      seen.imported = body;
    },
  },
  {
    step: 'the fetch of the imported connection',
    matches: /\/connections\/[^\s"?]+\?provider_config_key=/,
    check: async (run) => {
      expect(seen.imported).toBeDefined();
      const fetched = JSON.parse(run.stdout) as { connection_id: string; credentials: unknown };
      expect([fetched.connection_id, fetched.credentials]).toEqual([seen.imported!.connection_id, seen.imported!.credentials]);
    },
  },
  {
    step: 'a Connect session whose connect_link an end user opens on this machine',
    matches: /\/connect\/sessions"/,
    check: async (run) => {
      const link = (JSON.parse(run.stdout) as { data: { connect_link: string } }).data.connect_link;
      expect(link.startsWith(`http://localhost:${PORT}/connect?session_token=`)).toBe(true);
      // The end user: the link in a browser on this machine, a key typed into the form.
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        await page.goto(link);
        await page.fill('#f-values-apiKey', 'typed-by-the-end-user');
        await page.click('button[type=submit]');
        await page.waitForSelector('.card.success', { timeout: 30_000 });
      } finally {
        await browser.close();
      }
      // What "remove everything" must then remove: the flow's marker, and the auth webhook waiting for a receiver nobody runs.
      await until('the flow marker and the pending auth webhook', async () => {
        const names = (await core.listNamespacedConfigMap({ namespace: APP_NS })).items.map((c) => c.metadata!.name!);
        return names.some((n) => n.startsWith('latchkey-flow-')) && names.some((n) => n.startsWith('latchkey-webhook-msg-'));
      });
    },
  },
  {
    step: 'the connections listed: the imported one and the end user’s',
    matches: /^kubectl -n \S+ get connections/m,
    check: async (run) => {
      const rows = run.stdout.trim().split('\n').slice(1);
      expect(rows.length).toBe(2);
      expect(rows.some((r) => r.includes(seen.imported!.connection_id))).toBe(true);
    },
  },
  {
    step: 'helm upgrade: a second revision deployed, the pods Ready',
    matches: /^helm upgrade /m,
    check: async (run) => {
      expect(run.stdout).toMatch(/^2\s.*\bdeployed\b/m);
      const apps = kc.makeApiClient(AppsV1Api);
      const deployments = (await apps.listNamespacedDeployment({ namespace: RELEASE_NS })).items;
      expect(deployments.map((d) => [d.metadata!.name, d.status?.readyReplicas === d.spec?.replicas])).toEqual(
        expect.arrayContaining([
          [`${RELEASE}-controller`, true],
          [`${RELEASE}-server`, true],
        ]),
      );
    },
  },
  {
    step: 'helm uninstall: the release gone, the connections kept',
    matches: /^helm uninstall /m,
    check: async () => {
      const apps = kc.makeApiClient(AppsV1Api);
      expect((await apps.listNamespacedDeployment({ namespace: RELEASE_NS })).items).toEqual([]);
      const connections = (await kc
        .makeApiClient(CustomObjectsApi)
        .listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: APP_NS, plural: 'connections' })) as { items: unknown[] };
      expect(connections.items.length).toBe(2);
    },
  },
  {
    step: 'remove everything: nothing of Latchkey left',
    matches: /^kubectl delete crd /m,
    check: async () => {
      const crds = (await kc.makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition()).items.map((c) => c.metadata!.name!);
      expect(crds.filter((n) => n.endsWith('.latchkey.dev'))).toEqual([]);
      // The garbage collector deletes the Connections' Secrets and operation logs after their owners.
      let left = await latchkeyObjectsIn(APP_NS);
      for (const deadline = Date.now() + 60_000; left.length > 0 && Date.now() < deadline; left = await latchkeyObjectsIn(APP_NS))
        await new Promise((r) => setTimeout(r, 1000));
      expect(left).toEqual([]);
      expect((await core.listNamespace()).items.map((n) => n.metadata!.name)).not.toContain(RELEASE_NS);
    },
  },
];
const matched = new Set<string>();

describeOnNode(`${DOC}, the local-node path as written`, () => {
  beforeAll(async () => {
    // The doc's image is the one `npm run image` builds.
    expect(IMAGE).toBe(e2eImage());
    if (!(await portFree(PORT))) throw new Error(`port ${PORT} of this machine is in use: the doc's port-forward needs it`);
    bed = await startNodeBed(log, [IMAGE]);
    ({ kc, core } = bed);
    toolHomes = mkdtempSync(join(tmpdir(), 'latchkey-doc-tools-'));
    shell = new DocShell(REPO_ROOT, {
      ...process.env,
      // What the reader's terminal has after `export KUBECONFIG=…` (npm run node prints it).
      KUBECONFIG: bed.node.kubeconfigPath,
      // Helm's and kubectl's caches in a folder of this run, not in $HOME.
      HELM_CACHE_HOME: join(toolHomes, 'helm-cache'),
      HELM_CONFIG_HOME: join(toolHomes, 'helm-config'),
      HELM_DATA_HOME: join(toolHomes, 'helm-data'),
      KUBECACHEDIR: join(toolHomes, 'kube-cache'),
    });
  }, 1_800_000);

  afterAll(async () => {
    shell?.close();
    if (toolHomes) rmSync(toolHomes, { recursive: true, force: true });
    await bed?.stop();
  }, 120_000);

  for (const block of blocks) {
    const first = block.text.split('\n').find((l) => l.trim() && !l.startsWith('#')) ?? '';
    test(`${DOC}:${block.line} ${first.length > 70 ? `${first.slice(0, 70)}…` : first}`, async () => {
      const started = Date.now();
      const run = await shell.run(block, 660_000);
      log(`line ${block.line}: ${Date.now() - started} ms`);
      for (const c of CHECKS.filter((x) => x.matches.test(block.text))) {
        await c.check(run, block);
        matched.add(c.step);
      }
    }, 720_000);
  }

  test('the path has every step: helm install, an import and its fetch, a Connect session, helm upgrade, helm uninstall, remove everything', () => {
    expect(CHECKS.map((c) => c.step).filter((s) => !matched.has(s))).toEqual([]);
  });
});
