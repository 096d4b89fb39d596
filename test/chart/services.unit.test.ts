/**
 * The chart's Services select only pods that have their ports: `kubectl port-forward svc/latchkey
 * 8080:80` (docs/install.md) picks one selected pod and fails when that pod lacks the target port, as
 * it did when the one Service selected the controller pods too ("does not have a named port 'http'").
 * Rendered with `helm template`, so the selectors are compared with the Deployments' pod labels.
 */
import { loadAllYaml, type KubernetesObject, type V1Deployment, type V1Service } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../dev/control-plane.js';

const CHART = join(REPO_ROOT, 'charts/latchkey');

function render(args: string[] = []): { services: V1Service[]; deployments: V1Deployment[] } {
  const helm = execFileSync('bash', [join(REPO_ROOT, 'test/chart/tools.sh'), 'helm'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  const out = execFileSync(
    helm,
    [
      'template',
      'latchkey',
      CHART,
      '-n',
      'latchkey-system',
      '--show-only',
      'templates/service.yaml',
      '--show-only',
      'templates/deployment.yaml',
      ...args,
    ],
    { encoding: 'utf8' },
  );
  const objects = (loadAllYaml(out) as KubernetesObject[]).filter((o) => o?.kind);
  return {
    services: objects.filter((o) => o.kind === 'Service') as V1Service[],
    deployments: objects.filter((o) => o.kind === 'Deployment') as V1Deployment[],
  };
}

const selects = (service: V1Service, d: V1Deployment) =>
  Object.entries(service.spec!.selector!).every(([k, v]) => d.spec!.template.metadata!.labels![k] === v);

/** Per Service: the Deployments whose pods it selects, and for each port the selected pods' container port it targets. */
function wiring(args?: string[]) {
  const { services, deployments } = render(args);
  return Object.fromEntries(
    services.map((s) => {
      const selected = deployments.filter((d) => selects(s, d));
      const ports = s.spec!.ports!.map((p) => {
        const found = selected.map((d) =>
          d.spec!.template.spec!.containers.flatMap((c) => c.ports ?? []).find((cp) => cp.name === p.targetPort),
        );
        return `${p.name} ${p.port} -> ${found.map((cp) => (cp ? `${cp.name} ${cp.containerPort}` : 'missing')).join(', ')}`;
      });
      return [s.metadata!.name!, { selects: selected.map((d) => d.metadata!.name), ports }];
    }),
  );
}

describe('the Services', () => {
  it('latchkey selects the server pods only, latchkey-controller the controller pods; every target port exists on every selected pod', () => {
    expect(wiring()).toEqual({
      latchkey: { selects: ['latchkey-server'], ports: ['http 80 -> http 8080'] },
      'latchkey-controller': { selects: ['latchkey-controller'], ports: ['metrics 8081 -> metrics 8081'] },
    });
  });

  it('the dashboard port reaches the servers too', () => {
    expect(wiring(['--set', 'service.dashboardPort=8090']).latchkey).toEqual({
      selects: ['latchkey-server'],
      ports: ['http 80 -> http 8080', 'dashboard 8090 -> http 8080'],
    });
  });

  it('the controllers’ metrics Service is headless: each pod is scraped on its own', () => {
    const controller = render().services.find((s) => s.metadata!.name === 'latchkey-controller')!;
    expect(controller.spec!.clusterIP).toBe('None');
  });
});
