/**
 * The chart's alerts and Grafana dashboard against the code: every alert of
 * charts/latchkey/files/alerts.yaml passes `promtool check rules` and has a `promtool test rules`
 * case (test/chart/alerts/alerts.test.yaml) that fires it and one that does not; docs/operations.md
 * shows the same rules; the opt-in PrometheusRule renders them with the release's job label; and the
 * dashboard (charts/latchkey/dashboards/latchkey.json) and the alerts query only metric names and
 * labels the code registers, the dashboard showing every metric Latchkey registers itself.
 */
import { loadAllYaml } from '@kubernetes/client-node';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { createRegistry } from '../../src/platform/metrics.js';

const ALERTS = join(REPO_ROOT, 'charts/latchkey/files/alerts.yaml');
const ALERT_TESTS = join(REPO_ROOT, 'test/chart/alerts/alerts.test.yaml');
const DASHBOARD = join(REPO_ROOT, 'charts/latchkey/dashboards/latchkey.json');

interface Rule {
  alert: string;
  expr: string;
}
interface Groups {
  groups: { name: string; rules: Rule[] }[];
}

const loadYaml = (text: string) => loadAllYaml(text)[0] as unknown;
const alertGroups = () => loadYaml(readFileSync(ALERTS, 'utf8')) as Groups;

function promtool(args: string[]): { code: number; out: string } {
  execFileSync('bash', [join(REPO_ROOT, 'dev/node/packages.sh')], { stdio: 'inherit' });
  const r = spawnSync('promtool', args, { cwd: join(REPO_ROOT, 'test/chart/alerts'), encoding: 'utf8' });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

/** Labels Prometheus or the scrape adds to every series, which no code registers. */
const SCRAPE_LABELS = new Set(['le', 'job', 'pod', 'namespace', 'instance', 'container', 'service', 'endpoint', 'quantile']);

/** Every metric Latchkey registers itself (`name: 'latchkey_…'` in src/) with its label names. */
function registeredByCode(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : f.endsWith('.ts') ? [join(dir, f)] : []));
  for (const file of walk(join(REPO_ROOT, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/name: '(latchkey_[a-z_]+)'/g)) {
      const after = text.slice(m.index, m.index + 400);
      const next = after.slice(1).search(/name: 'latchkey_/);
      const labels = /labelNames: \[([^\]]*)\]/.exec(next === -1 ? after : after.slice(0, next + 1));
      found.set(m[1]!, labels ? [...labels[1]!.matchAll(/'([a-z_]+)'/g)].map((l) => l[1]!) : []);
    }
  }
  return found;
}

/** The metrics a scrape of Latchkey shows: the code's, and prom-client's process metrics under Latchkey's prefix. */
async function exported(): Promise<Map<string, string[]>> {
  const all = registeredByCode();
  for (const m of await createRegistry().getMetricsAsJSON()) all.set(m.name, []);
  return all;
}

/** Metric names a PromQL text reads, with histogram and summary suffixes mapped to the metric. */
function metricsIn(expr: string, known: Map<string, string[]>): string[] {
  return [...expr.matchAll(/\b(latchkey_[a-z0-9_]+)/g)].map(([, name]) =>
    known.has(name!) ? name! : name!.replace(/_(bucket|count|sum)$/, ''),
  );
}

/** Label names a PromQL text groups by or matches on. */
function labelsIn(expr: string): string[] {
  const byClauses = [...expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim()));
  const matchers = [...expr.matchAll(/\{([^}]*)\}/g)].flatMap((m) => [...m[1]!.matchAll(/([a-z_]+)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!));
  return [...byClauses, ...matchers].filter(Boolean);
}

function dashboardExprs(): string[] {
  const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  return dash.panels.flatMap((p) => p.targets.map((t) => t.expr));
}

describe('the chart’s alerts', () => {
  it('pass promtool check rules', () => {
    const r = promtool(['check', 'rules', ALERTS]);
    expect(r.out).toContain('SUCCESS');
    expect(r.code).toBe(0);
  });

  it('pass their promtool unit tests', () => {
    const r = promtool(['test', 'rules', ALERT_TESTS]);
    expect(r.out).not.toContain('FAILED');
    expect(r.code).toBe(0);
  });

  it('each have a promtool case that fires them and one that does not', () => {
    const tests = loadYaml(readFileSync(ALERT_TESTS, 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = tests.tests.flatMap((t) => t.alert_rule_test);
    for (const { alert } of alertGroups().groups.flatMap((g) => g.rules)) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect({ alert, fires: mine.some((c) => c.exp_alerts.length > 0), quiet: mine.some((c) => c.exp_alerts.length === 0) }).toEqual({
        alert,
        fires: true,
        quiet: true,
      });
    }
  });

  it('are the rules docs/operations.md shows', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Alerts worth setting'));
    const block = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
    const shown = loadYaml(block) as { spec: Groups };
    expect(shown.spec).toEqual(alertGroups());
  });

  it('read only metrics and labels that Latchkey exports (or kube-state-metrics’ restarts and up)', async () => {
    const known = await exported();
    for (const { alert, expr } of alertGroups().groups.flatMap((g) => g.rules)) {
      for (const name of metricsIn(expr, known))
        expect({ alert, name, exported: known.has(name) }).toEqual({ alert, name, exported: true });
      const allowed = new Set([...SCRAPE_LABELS, ...metricsIn(expr, known).flatMap((n) => known.get(n) ?? [])]);
      for (const label of labelsIn(expr)) expect({ alert, label, known: allowed.has(label) }).toEqual({ alert, label, known: true });
    }
  });
});

describe('the opt-in PrometheusRule and dashboard ConfigMap', () => {
  const helmTemplate = (args: string[]) => {
    const helm = execFileSync('bash', [join(REPO_ROOT, 'test/chart/tools.sh'), 'helm'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop()!;
    // The whole chart renders the shipped catalog too, several MiB: past execFileSync's default 1 MiB buffer.
    return execFileSync(helm, ['template', 'r', join(REPO_ROOT, 'charts/latchkey'), ...args], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
  };

  it('the PrometheusRule holds these rules, the job label the release’s (app.kubernetes.io/name)', () => {
    const rendered = loadYaml(
      helmTemplate(['--set', 'prometheusRule.enabled=true', '--set', 'nameOverride=lk', '--show-only', 'templates/prometheusrule.yaml']),
    ) as { kind: string; spec: Groups };
    expect(rendered.kind).toBe('PrometheusRule');
    const expected = JSON.parse(JSON.stringify(alertGroups()).replaceAll('job=\\"latchkey\\"', 'job=\\"lk\\"')) as Groups;
    expect(rendered.spec).toEqual(expected);
    expect(JSON.stringify(rendered.spec)).toContain('up{job=\\"lk\\"}');
  });

  it('an upgrade with --reuse-values of a release from before these values existed renders (neither is there)', () => {
    // helm --set KEY=null removes the key, as in the values a release installed by an older chart keeps.
    const rendered = helmTemplate(['--set', 'prometheusRule=null', '--set', 'grafanaDashboard=null']);
    expect(rendered).toContain('kind: Deployment');
    expect(rendered).not.toContain('kind: PrometheusRule');
  });

  it('neither is rendered by default; the ConfigMap carries the dashboard as it is', () => {
    const byDefault = helmTemplate([]);
    expect(byDefault).not.toContain('kind: PrometheusRule');
    expect(byDefault).not.toContain('grafana_dashboard');
    const cm = loadYaml(helmTemplate(['--set', 'grafanaDashboard.enabled=true', '--show-only', 'templates/grafana-dashboard.yaml'])) as {
      metadata: { labels: Record<string, string> };
      data: Record<string, string>;
    };
    expect(cm.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(cm.data['latchkey.json']!)).toEqual(JSON.parse(readFileSync(DASHBOARD, 'utf8')));
  });
});

describe('the Grafana dashboard', () => {
  it('queries only metrics and labels Latchkey exports', async () => {
    const known = await exported();
    for (const expr of dashboardExprs()) {
      const names = metricsIn(expr, known);
      expect(names.length).toBeGreaterThan(0);
      for (const name of names) expect({ expr, name, exported: known.has(name) }).toEqual({ expr, name, exported: true });
      const allowed = new Set([...SCRAPE_LABELS, ...names.flatMap((n) => known.get(n) ?? [])]);
      for (const label of labelsIn(expr)) expect({ expr, label, known: allowed.has(label) }).toEqual({ expr, label, known: true });
    }
  });

  it('shows every metric Latchkey registers itself', () => {
    const code = registeredByCode();
    const shown = new Set(dashboardExprs().flatMap((e) => metricsIn(e, code)));
    expect([...code.keys()].filter((name) => !shown.has(name))).toEqual([]);
  });
});
