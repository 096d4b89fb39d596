/**
 * The chart's Ingress publishes exactly the paths an end user's browser needs
 * (src/http/connect/browser-paths.ts), matched the way an Ingress controller matches them, and
 * none of the REST API: not `POST /connect/sessions`, which a `/connect` prefix would publish.
 */
import { loadAllYaml } from '@kubernetes/client-node';
import { BROWSER_PATHS, ingressMatches, type BrowserPath } from '../../src/http/connect/browser-paths.js';
import { CHART, Helm } from './helm.js';

interface IngressDoc {
  kind: string;
  spec: { rules: Array<{ http: { paths: Array<{ path: string; pathType: BrowserPath['pathType'] }> } }> };
}

let helm: Helm;
let rules: BrowserPath[];

beforeAll(async () => {
  helm = await Helm.build('/dev/null');
  const out = await helm.ok(['template', 'latchkey', CHART, '--set', 'ingress.enabled=true', '--show-only', 'templates/ingress.yaml']);
  const ingress = (loadAllYaml(out) as IngressDoc[]).find((d) => d?.kind === 'Ingress')!;
  rules = ingress.spec.rules[0]!.http.paths.map(({ path, pathType }) => ({ path, pathType }));
}, 1_200_000);
afterAll(() => helm?.cleanup());

it('routes exactly the browser paths, with the same path types', () => {
  expect(rules).toEqual([...BROWSER_PATHS]);
});

it.each([
  '/connect/sessions',
  '/connect/sessions/reconnect',
  '/connections',
  '/connection',
  '/proxy/user',
  '/metrics',
  '/openapi.json',
  '/providers',
])('does not route %s (REST API, proxy, metrics)', (path) => {
  expect(rules.some((r) => ingressMatches(r, path))).toBe(false);
});

it.each([
  '/connect',
  '/connect/embed',
  '/connect/ui.js',
  '/connect/api/session',
  '/connect/api/oauth/start',
  '/connect/api/forms',
  '/oauth/callback',
  '/webhooks/team-a/github',
])('routes %s', (path) => {
  expect(rules.some((r) => ingressMatches(r, path))).toBe(true);
});

it('matches Prefix rules on whole path elements', () => {
  expect(ingressMatches({ path: '/connect/api', pathType: 'Prefix' }, '/connect/apix')).toBe(false);
  expect(ingressMatches({ path: '/connect/api', pathType: 'Prefix' }, '/connect/api/forms')).toBe(true);
});
