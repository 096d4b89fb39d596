/**
 * The probes of both containers, rendered with the default values: a startup probe holds the liveness
 * probe back until the process answers, and the liveness probe restarts only a process stuck for a
 * while. The end-to-end suite (test/e2e/helm-lifecycle.test.ts) found, on a busy node, the liveness probe
 * (then 3 failures of 3 s, 10 s after start) killing new pods before they listened and serving ones
 * under load during `helm rollback`: hundreds of failed requests.
 */
import { loadAllYaml, type V1Deployment, type V1Probe } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../dev/control-plane.js';

const CHART = join(REPO_ROOT, 'charts/latchkey');

function containers(args: string[] = []) {
  const helm = execFileSync('bash', [join(REPO_ROOT, 'test/chart/tools.sh'), 'helm'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  const out = execFileSync(helm, ['template', 'r', CHART, '--show-only', 'templates/deployment.yaml', ...args], { encoding: 'utf8' });
  return (loadAllYaml(out) as V1Deployment[]).map((d) => d.spec!.template.spec!.containers[0]!);
}

/** Seconds a probe lets a process go unanswered before it acts (the first failure's probe counted whole). */
const patience = (p: V1Probe) => p.failureThreshold! * p.periodSeconds!;

describe('probes', () => {
  it('a startup probe on /healthz gives each container minutes to start; liveness waits for it', () => {
    for (const c of containers()) {
      expect([c.name, c.startupProbe?.httpGet?.path]).toEqual([c.name, '/healthz']);
      expect(patience(c.startupProbe!)).toBeGreaterThanOrEqual(180);
      expect(c.livenessProbe!.initialDelaySeconds).toBe(0);
    }
  });

  it('liveness restarts a process only after a minute without an answer; readiness stays quick', () => {
    for (const c of containers()) {
      expect([c.name, patience(c.livenessProbe!) >= 60, c.livenessProbe!.timeoutSeconds! >= 5]).toEqual([c.name, true, true]);
      expect([c.name, patience(c.readinessProbe!)]).toEqual([c.name, 15]);
    }
  });

  it('an upgrade with --reuse-values of a release from before the startup probe renders without one', () => {
    const old = containers(['--set', 'controller.startupProbe=null', '--set', 'server.startupProbe=null']);
    expect(old.map((c) => c.startupProbe)).toEqual([undefined, undefined]);
  });
});
