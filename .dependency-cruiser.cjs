/**
 * The layer table of docs/architecture.md, enforced. A layer may import the layers listed for it
 * (and itself). `platform` (config, log, metrics) and `context` (the AppContext type) are layers like
 * the others; `app` (cli, run, createContext) wires the components and nothing in src imports it.
 */
const LAYERS = {
  domain: [],
  // The egress guard (SSRF): checked addresses for every outbound connection; no I/O but DNS.
  egress: ['domain'],
  // Process-wide services: configuration (it parses the egress allowlist), the logger, metrics.
  platform: ['domain', 'egress'],
  oplog: ['domain', 'platform'],
  k8s: ['domain', 'platform', 'oplog'],
  // The AppContext type: what every component above is built from.
  context: ['domain', 'platform', 'oplog', 'k8s', 'egress'],
  catalog: ['domain', 'platform', 'context', 'oplog', 'k8s'],
  auth: ['domain', 'platform', 'context', 'oplog', 'k8s', 'catalog', 'egress'],
  // One module per auth mode and their registry: what each mode decides (src/k8s for types only, below).
  modes: ['domain', 'oplog', 'k8s', 'catalog', 'auth', 'egress'],
  webhooks: ['domain', 'platform', 'context', 'oplog', 'k8s', 'egress'],
  connections: ['domain', 'platform', 'context', 'oplog', 'k8s', 'catalog', 'auth', 'modes', 'webhooks', 'egress'],
  integrations: ['domain', 'platform', 'context', 'k8s', 'catalog', 'modes'],
  connect: ['domain', 'platform', 'context', 'oplog', 'k8s', 'catalog', 'auth', 'modes', 'webhooks', 'connections', 'egress'],
  proxy: ['domain', 'platform', 'context', 'oplog', 'k8s', 'catalog', 'auth', 'modes', 'egress'],
  // Stored-format migrations shipped in the image (`latchkey migrate`): pure plans, written through src/k8s.
  migrations: ['domain', 'oplog', 'k8s'],
  controller: ['domain', 'platform', 'context', 'oplog', 'k8s', 'catalog', 'auth', 'modes', 'webhooks', 'connections', 'egress'],
  http: [
    'domain',
    'platform',
    'context',
    'oplog',
    'k8s',
    'catalog',
    'auth',
    'modes',
    'webhooks',
    'connections',
    'integrations',
    'connect',
    'proxy',
    'egress',
  ],
  browser: [],
  // `kubectl latchkey`: the plugin's commands and output, acting through the person's kubeconfig (src/k8s).
  kubectl: ['domain', 'oplog', 'k8s'],
};
const ALL = [...Object.keys(LAYERS), 'app'];

const layerRules = Object.entries(LAYERS).map(([layer, allowed]) => ({
  name: `layer-${layer}`,
  comment: `src/${layer} may import only: ${allowed.length ? allowed.join(', ') : 'nothing of ours'}`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: {
    path: `^src/(${ALL.filter((l) => l !== layer && !allowed.includes(l)).join('|')})/`,
    // The browser code shares the Connect UI's wire types (types only, erased at compile time).
    pathNot: layer === 'browser' ? ['^src/connect/wire\\.ts$'] : [],
  },
}));

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    ...layerRules,
    {
      name: 'nothing-in-src-imports-the-wiring',
      comment: 'src/app (cli, run, createContext) wires the components; only tests, benchmarks and dev tools import it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/app/' },
      to: { path: '^src/app/' },
    },
    {
      name: 'only-k8s-talks-to-kubernetes',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/k8s/' },
      to: { path: '@kubernetes/client-node' },
    },
    {
      // The build bundles that one module down to what it names (dev/build/bundle-kubernetes-client.mjs);
      // a value imported from the package anywhere else would load the whole package again.
      name: 'kubernetes-client-through-one-module',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/k8s/kubernetes-client\\.ts$' },
      to: { path: '@kubernetes/client-node', dependencyTypesNot: ['type-only'] },
    },
    {
      // A mode module decides; what it reads of the cluster comes through the store it is handed. The
      // resources' shapes and constants (resources.ts: no API call) are read as values too.
      name: 'modes-import-k8s-types-only',
      severity: 'error',
      from: { path: '^src/modes/' },
      to: { path: '^src/k8s/', pathNot: '^src/k8s/resources\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      // A mode's folder holds what is its alone; what several modes use is in src/modes/shared/ (or
      // src/auth), so a mode is added or removed as one folder. `$1` is the importing file's folder.
      name: 'modes-import-no-other-mode',
      severity: 'error',
      from: { path: '^src/modes/([^/]+)/' },
      to: { path: '^src/modes/[^/]+/', pathNot: '^src/modes/($1|shared)/' },
    },
    {
      name: 'only-http-imports-express',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/http/' },
      to: { path: '^(express|@types/express)($|/)|node_modules/express/' },
    },
    {
      name: 'src-is-self-contained',
      comment: 'the image ships dist/src alone',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(dev|test|bench)/' },
    },
    { name: 'bench-not-test', severity: 'error', from: { path: '^bench/' }, to: { path: '^test/' } },
    { name: 'test-not-bench', severity: 'error', from: { path: '^test/' }, to: { path: '^bench/' } },
    { name: 'dev-not-test-or-bench', severity: 'error', from: { path: '^dev/' }, to: { path: '^(test|bench)/' } },
    {
      name: 'no-dev-dependencies-in-src',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'test/tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js'],
    },
    exclude: { path: '^dist/' },
  },
};
// For dev/lint/check-docs.mjs, which checks the table against LAYERS; not enumerable, as the config's
// schema allows no other keys.
Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS, enumerable: false });
