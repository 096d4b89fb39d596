/**
 * The lint check that docs and comments agree with the code (dev/lint/check-docs.mjs): the layer
 * table of docs/architecture.md against the LAYERS of .dependency-cruiser.cjs, and paths of source
 * files named in comments and docs. The pure comparisons with tables and texts that disagree, then the
 * script itself on a small repository written to a temporary directory, and on this one.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '../../dev/repo-root.js';
import { layerTableDifferences, parseMayImport } from '../../dev/lint/architecture-table.mjs';
import { missingNamedPaths, namedSourcePaths } from '../../dev/lint/named-paths.mjs';

// Joined at run time: written out, a path that does not exist would fail the very check under test.
const path = (...parts: string[]) => parts.join('/');

const LAYERS = { domain: [], oplog: ['domain'], k8s: ['domain', 'oplog'], http: ['domain', 'k8s'], browser: [] };

function table(rows: Array<[string, string]>): string {
  return [
    '# Architecture',
    '',
    '| folder | job | may import |',
    '|---|---|---|',
    ...rows.map(([folder, mayImport]) => `| \`src/${folder}\` | what it does, with \`code\` | ${mayImport} |`),
    '',
    '| folder | job | may import |',
    '|---|---|---|',
    '| `dev/` | runs the product locally | src |',
  ].join('\n');
}

const AGREEING: Array<[string, string]> = [
  ['domain', 'nothing of ours'],
  ['oplog', 'domain'],
  ['k8s', 'domain, oplog'],
  ['http', 'domain, k8s'],
  ['browser', '`connect/wire.ts` (types only)'],
  ['app', 'everything'],
];
const wireExempt = (layer: string, file: string) => layer === 'browser' && file === 'src/connect/wire.ts';

describe('layer table against LAYERS', () => {
  it('finds no difference when every row lists what the rules allow', () => {
    expect(layerTableDifferences(LAYERS, table(AGREEING), { fileExempt: wireExempt, folders: Object.keys(LAYERS) })).toEqual([]);
  });

  it('reads a "may import" cell as folders and single files, notes in parentheses left out', () => {
    expect(parseMayImport('nothing of ours')).toEqual({ folders: [], files: [] });
    expect(parseMayImport('domain, `k8s`,oplog')).toEqual({ folders: ['domain', 'k8s', 'oplog'], files: [] });
    expect(parseMayImport('`connect/wire.ts` (types only)')).toEqual({ folders: [], files: ['connect/wire.ts'] });
  });

  it('lists every difference: rows missing on either side, imports allowed but not listed, listed but not allowed', () => {
    const markdown = table([
      ['domain', 'nothing of ours'],
      ['k8s', 'domain'],
      ['http', 'domain, k8s, oplog, every folder above'],
      ['browser', '`connect/wire.ts` (types only), `k8s/store.ts`'],
      ['proxy', 'domain'],
      ['k8s', 'domain, oplog'],
    ]);
    expect(
      layerTableDifferences(LAYERS, markdown, { fileExempt: wireExempt, folders: ['domain', 'oplog', 'k8s', 'http', 'browser', 'cron'] }),
    ).toEqual([
      'src/k8s: the rules allow importing oplog; the table does not list it',
      'src/http: the table lists oplog; the rules do not allow it',
      'src/http: the table lists "every folder above", which is no folder of the rules',
      'src/browser: the table lists k8s/store.ts; the rules do not allow it',
      'src/proxy: a row in the table, but no layer in the rules (LAYERS)',
      'src/k8s: the table has two rows for it',
      'src/oplog: a layer in the rules (LAYERS), but no row in the table',
      'src/app: the folder that wires the components has no row in the table',
      'src/cron: a folder of src/ that the rules (LAYERS) do not name',
    ]);
  });

  it('says so when the document has no layer table', () => {
    expect(layerTableDifferences(LAYERS, '# Architecture\n\nNo table here.\n')).toEqual([
      'docs/architecture.md: no `| folder | job | may import |` table with `src/...` rows',
    ]);
  });
});

describe('source paths named in comments and docs', () => {
  it('finds paths into src, dev, test, bench and docs with their lines, and nothing inside longer paths or templates', () => {
    const text = [
      `// the refresher (${path('src', 'auth', 'refresh', 'token-refresher.ts')}), see ${path('test', 'k8s', 'store.test.ts')}.`,
      `built to dist/${path('src', 'k8s', 'kubernetes-client.ts')} or node_modules/x/${path('src', 'index.ts')}`,
      `run \`node ${path('dev', 'lint', 'check-docs.mjs')}\`; compiled: ${path('src', 'app', 'run.js')}, data: ${path('bench', 'before.json')}`,
      `a template: \`test/\${name}.test.ts\`, a glob: src/**/*.ts`,
      `the cookie (see ${path('docs', 'security-oauth-callback.md')}), not node_modules/x/${path('docs', 'README.md')}`,
    ].join('\n');
    expect(namedSourcePaths(text)).toEqual([
      { path: path('src', 'auth', 'refresh', 'token-refresher.ts'), line: 1 },
      { path: path('test', 'k8s', 'store.test.ts'), line: 1 },
      { path: path('dev', 'lint', 'check-docs.mjs'), line: 3 },
      { path: path('docs', 'security-oauth-callback.md'), line: 5 },
    ]);
  });

  it('reports each named path that does not exist with its file and line', () => {
    const gone = path('src', 'auth', 'refresh.ts');
    const files = [
      { file: path('src', 'a.ts'), text: `/** The refresher (${gone}). */\nconst x = 1;\n// again: ${gone}` },
      { file: path('docs', 'b.md'), text: `See \`${path('src', 'app', 'run.ts')}\`.` },
    ];
    const exists = (p: string) => p === path('src', 'app', 'run.ts');
    expect(missingNamedPaths(files, exists)).toEqual([
      `${path('src', 'a.ts')}:1: names ${gone}, which does not exist`,
      `${path('src', 'a.ts')}:3: names ${gone}, which does not exist`,
    ]);
  });
});

describe('node dev/lint/check-docs.mjs', () => {
  const script = join(REPO_ROOT, 'dev/lint/check-docs.mjs');
  const run = (root?: string) => spawnSync(process.execPath, root ? [script, root] : [script], { encoding: 'utf8' });

  it('fails on a repository whose table and rules disagree and whose comments name a missing file, listing both', () => {
    const root = mkdtempSync(join(tmpdir(), 'latchkey-docs-lint-'));
    try {
      const write = (file: string, text: string) => {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        writeFileSync(join(root, file), text);
      };
      write(
        '.dependency-cruiser.cjs',
        [
          "const LAYERS = { domain: [], oplog: ['domain'], k8s: ['domain', 'oplog'] };",
          'module.exports = { forbidden: [] };',
          "Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS, enumerable: false });",
        ].join('\n'),
      );
      write(
        'docs/architecture.md',
        table([
          ['domain', 'nothing of ours'],
          ['oplog', 'domain'],
          ['k8s', 'domain'],
          ['app', 'everything'],
        ]),
      );
      write('src/k8s/store.ts', `/** Entries go to the operation log (${path('src', 'oplog', 'gone.ts')}). */\nexport {};\n`);
      mkdirSync(join(root, 'src/domain'));
      mkdirSync(join(root, 'src/oplog'));
      const result = run(root);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('src/k8s: the rules allow importing oplog; the table does not list it');
      expect(result.stderr).toContain(`src/k8s/store.ts:1: names ${path('src', 'oplog', 'gone.ts')}, which does not exist`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("passes on this repository: docs/architecture.md's table is the rules', and every named path exists", () => {
    const result = run();
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
  });
});
