/**
 * The auth mode registry (src/modes/registry.ts): one module for every mode, and no switching on the
 * auth mode anywhere else in src/ — what a mode decides lives in its module, so adding one is one new
 * module and one registry line (docs/architecture.md, "Adding an auth mode").
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../../dev/repo-root.js';
import { AUTH_MODES, MINTED_TOKEN_FIELD } from '../../src/domain/auth-modes.js';
import { AUTH_MODE_MODULES, refreshStrategies } from '../../src/modes/registry.js';

const MODE = AUTH_MODES.join('|');
/** What switching on the auth mode looks like: each pattern is one shape the modules replaced. */
const SWITCHES: RegExp[] = [
  // switch (credentials.type) { case 'OAUTH2': ... }
  new RegExp(`\\bcase\\s+'(${MODE})'\\s*:`),
  // mode === 'OAUTH1', credentials.type !== 'SIGNATURE', 'APP' === x
  new RegExp(`[!=]==\\s*'(${MODE})'(?![\\w])`),
  new RegExp(`'(${MODE})'\\s*[!=]==`),
  // new Set(['OAUTH2', 'OAUTH2_CC', ...]).has(mode), ['APP', 'CUSTOM'].includes(mode)
  new RegExp(`new Set\\(\\[\\s*'(${MODE})'`),
  new RegExp(`\\[\\s*'(${MODE})'(\\s*,\\s*'(${MODE})')*\\s*,?\\s*\\]\\s*\\.\\s*includes\\(`),
  // const SECRET_KEYS: Partial<Record<AuthMode, ...>> = { OAUTH2: ..., }
  /\bRecord<\s*AuthMode\s*,/,
];
/** Where the modes are decided: the modules, their registry, and the mode type with its declarative table. */
const ALLOWED = [/^src\/modes\//, /^src\/domain\/auth-modes\.ts$/];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

/** `file:line: text` for every line of src/ outside the allowed places that switches on the auth mode. */
function switchesOnAuthMode(): string[] {
  return sourceFiles(join(REPO_ROOT, 'src')).flatMap((full) => {
    const file = relative(REPO_ROOT, full).split('\\').join('/');
    if (ALLOWED.some((a) => a.test(file))) return [];
    return readFileSync(full, 'utf8')
      .split('\n')
      .flatMap((text, i) => (SWITCHES.some((p) => p.test(text)) ? [`${file}:${i + 1}: ${text.trim()}`] : []));
  });
}

describe('auth mode registry', () => {
  it('has a module for every auth mode, under its own name', () => {
    expect(Object.keys(AUTH_MODE_MODULES).sort()).toEqual([...AUTH_MODES].sort());
    for (const mode of AUTH_MODES) expect(AUTH_MODE_MODULES[mode].mode).toBe(mode);
  });

  it('gives the refresher a strategy for exactly the modes whose module renews', () => {
    const renewing = AUTH_MODES.filter((m) => AUTH_MODE_MODULES[m].refresh !== undefined);
    expect([...refreshStrategies().keys()].sort()).toEqual(renewing.sort());
    expect(renewing).toEqual(expect.arrayContaining(['OAUTH2', 'OAUTH2_CC', 'APP', 'CUSTOM', 'JWT', 'TWO_STEP', 'BILL', 'APP_STORE']));
  });

  it('keeps the minted-token table of src/domain/auth-modes.ts in step with the modules minting on use', () => {
    for (const mode of AUTH_MODES) {
      const m = AUTH_MODE_MODULES[mode];
      const mintedOnUse = m.refresh?.renewAhead === false;
      expect({ mode, minted: MINTED_TOKEN_FIELD[mode] !== undefined }).toEqual({ mode, minted: mintedOnUse });
      if (mintedOnUse) expect(MINTED_TOKEN_FIELD[mode]).toBe(m.proxy.accessTokenField);
    }
  });

  it('recognizes the switches on the auth mode the modules replaced, and not other comparisons', () => {
    const flagged = (line: string) => SWITCHES.some((p) => p.test(line));
    for (const line of [
      "    case 'OAUTH2':",
      "  if ((mode === 'OAUTH2' || mode === 'OAUTH1') && !spec.tokenUrl) {",
      "    if (conn.credentials.type !== 'SIGNATURE') {",
      "        if (body.credentials.type === 'JWT') {",
      "const BEARER_MODES = new Set(['OAUTH2', 'OAUTH2_CC', 'APP']);",
      "  return ['APP', 'CUSTOM'].includes(mode);",
      'const SECRET_KEYS: Partial<Record<AuthMode, { keys: NeededKey[] }>> = {',
      'export const CONNECT_MODES: Record<AuthMode, ConnectMode> = {',
    ])
      expect({ line, flagged: flagged(line) }).toEqual({ line, flagged: true });
    for (const line of [
      "  if (data.type === 'connect' && typeof data.providerConfigKey === 'string') {",
      "    type: z.enum(['OAUTH1', 'OAUTH2', 'TBA']),",
      "  return { type: 'OAUTH2', access_token: tokens.access_token };",
      "  if (mode === 'APPLE') return;",
      '    if (stored.credentials.type !== authMode) {',
    ])
      expect({ line, flagged: flagged(line) }).toEqual({ line, flagged: false });
  });

  it('finds no switch on the auth mode in src/ outside src/modes and the mode type', () => {
    expect(switchesOnAuthMode()).toEqual([]);
  });
});
