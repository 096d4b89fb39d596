/**
 * One version for the npm package, the chart and the image (the chart's default image tag is its
 * appVersion), a changelog entry for it, and the migration Jobs the chart offers as Helm hooks.
 */
import { loadAllYaml, type V1Deployment, type V1Job } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { MIGRATIONS } from '../../src/migrations/registry.js';

const CHART = join(REPO_ROOT, 'charts/latchkey');
const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');
const chartField = (name: string) => new RegExp(`^${name}:\\s*"?([^"\\s]+)"?\\s*$`, 'm').exec(read('charts/latchkey/Chart.yaml'))?.[1];

function helm(args: string[]): string {
  const bin = execFileSync('bash', [join(REPO_ROOT, 'test/chart/tools.sh'), 'helm'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  return execFileSync(bin, ['template', 'r', CHART, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

const version = (JSON.parse(read('package.json')) as { version: string }).version;

describe('release version', () => {
  it('package.json, package-lock.json, the chart version, its appVersion and the krew plugin manifest agree, and are semantic versions', () => {
    const lock = JSON.parse(read('package-lock.json')) as { version: string; packages: Record<string, { version?: string }> };
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    expect({
      lock: lock.version,
      lockRoot: lock.packages['']!.version,
      chart: chartField('version'),
      app: chartField('appVersion'),
      krewPlugin: /^  version: (.+)$/m.exec(read('plugins/krew/latchkey.yaml'))?.[1],
    }).toEqual({
      lock: version,
      lockRoot: version,
      chart: version,
      app: version,
      krewPlugin: `v${version}`,
    });
  });

  it('the chart deploys the image of its appVersion unless image.tag says otherwise', () => {
    const images = (loadAllYaml(helm(['--show-only', 'templates/deployment.yaml'])) as V1Deployment[]).map(
      (d) => d.spec!.template.spec!.containers[0]!.image,
    );
    expect(images).toEqual([`ghcr.io/latchkey/latchkey:${version}`, `ghcr.io/latchkey/latchkey:${version}`]);
  });

  it('CHANGELOG.md has an Unreleased section and one for this version, with its upgrade notes', () => {
    const changelog = read('CHANGELOG.md');
    expect(changelog).toMatch(/^## \[Unreleased\]$/m);
    const section = changelog.split(new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'))[1];
    expect(section).toBeDefined();
    expect(section!.split(/^## /m)[0]).toMatch(/^### Upgrading$/m);
  });
});

describe('migration Jobs', () => {
  it('are off by default', () => {
    expect(() => helm(['--show-only', 'templates/migrate-job.yaml'])).toThrow(/could not find template/);
  });

  it('run each named migration after install and upgrade, as the chart ServiceAccount', () => {
    const jobs = loadAllYaml(
      helm(['--show-only', 'templates/migrate-job.yaml', '--set', 'migrations.enabled=true', '--set', 'migrations.dryRun=true']),
    ) as V1Job[];
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job.metadata!.annotations).toMatchObject({ 'helm.sh/hook': 'post-install,post-upgrade' });
    const pod = job.spec!.template.spec!;
    expect(pod.serviceAccountName).toBe('r-latchkey');
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.containers[0]!.args).toEqual(['migrate', 'zoho-data-centre', '--dry-run']);
    expect(pod.containers[0]!.image).toBe(`ghcr.io/latchkey/latchkey:${version}`);
  });

  it('name only migrations the image ships', () => {
    const values = read('charts/latchkey/values.yaml');
    const names = /^migrations:[\s\S]*?^ {2}names: \[([^\]]*)\]/m
      .exec(values)![1]!
      .split(',')
      .map((s) => s.trim());
    for (const name of names) expect([name, MIGRATIONS.has(name)]).toEqual([name, true]);
  });
});
