/**
 * config.egress.caBundle, rendered: a platform team's private CA (a ConfigMap or a Secret of the
 * release namespace) mounted read-only into both containers and named by NODE_EXTRA_CA_CERTS, which
 * Node.js adds to its public CAs for every outbound TLS connection (token endpoints, the proxy,
 * webhooks). test/e2e/helm-lifecycle.test.ts refreshes a token at an HTTPS provider signed by such a CA.
 */
import { loadAllYaml } from '@kubernetes/client-node';
import type { V1Deployment } from '@kubernetes/client-node';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../dev/control-plane.js';

const CHART = join(REPO_ROOT, 'charts/latchkey');
const helm = () =>
  execFileSync('bash', [join(REPO_ROOT, 'test/chart/tools.sh'), 'helm'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;

function deployments(args: string[]): V1Deployment[] {
  const out = execFileSync(helm(), ['template', 'r', CHART, '--show-only', 'templates/deployment.yaml', ...args], { encoding: 'utf8' });
  return loadAllYaml(out) as V1Deployment[];
}

/** Per container: NODE_EXTRA_CA_CERTS, the CA mount and the volume it comes from. */
function caOf(d: V1Deployment) {
  const pod = d.spec!.template.spec!;
  const c = pod.containers[0]!;
  return {
    env: c.env?.find((e) => e.name === 'NODE_EXTRA_CA_CERTS')?.value,
    mount: c.volumeMounts?.find((m) => m.name === 'egress-ca'),
    volume: pod.volumes?.find((v) => v.name === 'egress-ca'),
  };
}

describe('config.egress.caBundle', () => {
  it('renders nothing by default: the public CAs only', () => {
    for (const d of deployments([])) expect(caOf(d)).toEqual({ env: undefined, mount: undefined, volume: undefined });
  });

  it('a ConfigMap: its key mounted read-only in the controller and the server, named by NODE_EXTRA_CA_CERTS', () => {
    const ds = deployments(['--set', 'config.egress.caBundle.configMap=corp-ca', '--set', 'config.egress.caBundle.key=bundle.pem']);
    expect(ds.map((d) => d.spec!.template.spec!.containers[0]!.name)).toEqual(['controller', 'server']);
    for (const d of ds)
      expect(caOf(d)).toEqual({
        env: '/etc/latchkey/egress-ca/ca.pem',
        mount: { name: 'egress-ca', mountPath: '/etc/latchkey/egress-ca', readOnly: true },
        volume: { name: 'egress-ca', configMap: { name: 'corp-ca', items: [{ key: 'bundle.pem', path: 'ca.pem' }] } },
      });
  });

  it('a Secret, with the default key ca.crt', () => {
    for (const d of deployments(['--set', 'config.egress.caBundle.secret=corp-ca']))
      expect(caOf(d).volume).toEqual({ name: 'egress-ca', secret: { secretName: 'corp-ca', items: [{ key: 'ca.crt', path: 'ca.pem' }] } });
  });

  it('refuses both a ConfigMap and a Secret, and a misspelt field', () => {
    const both = spawnSync(
      helm(),
      ['template', 'r', CHART, '--set', 'config.egress.caBundle.configMap=a', '--set', 'config.egress.caBundle.secret=b'],
      { encoding: 'utf8' },
    );
    expect([both.status, /configMap or secret, not both/.test(both.stderr)]).toEqual([1, true]);
    const misspelt = spawnSync(helm(), ['template', 'r', CHART, '--set', 'config.egress.caBundle.configmap=a'], { encoding: 'utf8' });
    expect([misspelt.status, /configmap/.test(misspelt.stderr)]).toEqual([1, true]);
  });

  it('an upgrade with --reuse-values of a release from before the value renders (no bundle)', () => {
    // helm --set KEY=null removes the key, as in the values a release installed by an older chart keeps.
    for (const d of deployments(['--set', 'config.egress.caBundle=null'])) expect(caOf(d).volume).toBeUndefined();
  });
});
