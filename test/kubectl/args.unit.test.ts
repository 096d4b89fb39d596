import { parseArgs, parseDuration, type PluginArgs } from '../../src/kubectl/args.js';

function ok(argv: string[], env: Record<string, string> = {}): PluginArgs {
  const r = parseArgs(argv, env);
  if (!r.ok || !('args' in r)) throw new Error(`expected arguments, got ${JSON.stringify(r)}`);
  return r.args;
}
function refused(argv: string[], env: Record<string, string> = {}): string {
  const r = parseArgs(argv, env);
  if (r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r)}`);
  return r.error;
}

describe('kubectl latchkey arguments', () => {
  it('takes kubectl-style flags anywhere, in each spelling', () => {
    const spellings = [
      ['logs', 'conn-a', '-n', 'team', '--context', 'prod', '--kubeconfig', '/k', '-o', 'json'],
      ['-n=team', 'logs', '--context=prod', 'conn-a', '--kubeconfig=/k', '--output=json'],
      ['--namespace', 'team', 'logs', 'conn-a', '-ojson', '--context', 'prod', '--kubeconfig', '/k'],
      ['-nteam', '-o', 'json', 'logs', '--context', 'prod', '--kubeconfig', '/k', 'conn-a'],
    ];
    for (const argv of spellings)
      expect(ok(argv)).toMatchObject({
        command: 'logs',
        target: 'conn-a',
        namespace: 'team',
        context: 'prod',
        kubeconfig: '/k',
        output: 'json',
      });
  });

  it('defaults to tables in the context namespace, waiting up to 60 s for a refresh, looking 24 h ahead', () => {
    const args = ok(['status']);
    expect(args).toEqual({
      command: 'status',
      allNamespaces: false,
      output: 'table',
      wait: true,
      timeoutMs: 60_000,
      expiringWithinMs: 86_400_000,
    });
    expect(ok(['refresh', 'c', '--no-wait', '--timeout', '2m'])).toMatchObject({ wait: false, timeoutMs: 120_000 });
    expect(ok(['status', '-A', '--expiring-within', '7d'])).toMatchObject({ allNamespaces: true, expiringWithinMs: 7 * 86_400_000 });
  });

  it('needs --end-user and a server URL for connect-link (flag or LATCHKEY_SERVER)', () => {
    expect(refused(['connect-link', 'github'])).toMatch(/--end-user/);
    expect(refused(['connect-link', 'github', '--end-user', 'u1'])).toMatch(/--server/);
    expect(refused(['connect-link', 'github', '--end-user', 'u1', '--server', 'latchkey.local'])).toMatch(/not an http/);
    expect(ok(['connect-link', 'github', '--end-user', 'u1'], { LATCHKEY_SERVER: 'https://latchkey.example.com/' })).toMatchObject({
      target: 'github',
      endUser: 'u1',
      server: 'https://latchkey.example.com',
    });
  });

  it('refuses what it does not know, saying what is wrong', () => {
    expect(refused(['frobnicate'])).toMatch(/unknown command "frobnicate"/);
    expect(refused(['status', '--watch'])).toMatch(/unknown flag: --watch/);
    expect(refused(['refresh'])).toMatch(/refresh takes one connection/);
    expect(refused(['refresh', 'a', 'b'])).toMatch(/refresh takes one connection/);
    expect(refused(['status', 'extra'])).toMatch(/takes no arguments/);
    expect(refused(['status', '-o', 'yaml'])).toMatch(/unknown output format "yaml"/);
    expect(refused(['status', '-n'])).toMatch(/flag needs an argument: -n/);
    expect(refused(['logs', 'c', '-A'])).toMatch(/use -n, not -A/);
    expect(refused(['status', '-A', '-n', 'x'])).toMatch(/either -n or -A/);
    expect(refused(['refresh', 'c', '--timeout', 'soon'])).toMatch(/not a duration/);
  });

  it('prints its usage for no command, -h and --help', () => {
    for (const argv of [[], ['-h'], ['status', '--help']]) {
      const r = parseArgs(argv);
      expect(r.ok && 'help' in r && r.help).toMatch(/kubectl latchkey status/);
    }
  });

  it('reads durations as kubectl does', () => {
    expect(parseDuration('90')).toBe(90_000);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1.5h')).toBeUndefined();
    expect(parseDuration('-1s')).toBeUndefined();
  });
});
