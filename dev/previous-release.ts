/**
 * The previous release, built from git for the upgrade e2e (test/e2e/upgrade-from-previous.test.ts):
 * CHANGELOG.md names it (the newest version below package.json's; its tag `v<version>`, or until the
 * first tag the commit its section names), a detached worktree at that commit under
 * ~/.cache/latchkey/releases/, `npm ci --omit=dev` and `npm run image` there with a tag of the version and the
 * commit. Cached by commit: a second run finds the worktree and the image and builds nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './repo-root.js';

export interface PreviousRelease {
  version: string;
  commit: string;
  /** The release's checkout (a git worktree). */
  dir: string;
  /** Its Helm chart. */
  chart: string;
  /** The image `npm run image` built there (podman), `repository:tag`. */
  image: string;
  repository: string;
  tag: string;
}

const RELEASES_DIR = join(process.env.LATCHKEY_CACHE_DIR ?? join(homedir(), '.cache', 'latchkey'), 'releases');
const IMAGE_REPOSITORY = 'localhost/latchkey';

const git = (args: string[], cwd = REPO_ROOT) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

const semver = (v: string) => v.split('.').map(Number) as [number, number, number];
const below = (a: string, b: string) => {
  const [x, y] = [semver(a), semver(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]!;
  return false;
};

/** The previous release as CHANGELOG.md names it: the newest released version below `current`, and its commit. */
export function previousReleaseOf(changelog: string, current: string, resolveTag: (tag: string) => string | undefined) {
  const sections = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\][^\n]*\n([\s\S]*?)(?=^## \[|(?![\s\S]))/gm)].map((m) => ({
    version: m[1]!,
    text: m[2]!,
  }));
  const previous = sections.filter((s) => below(s.version, current)).sort((a, b) => (below(a.version, b.version) ? 1 : -1))[0];
  if (!previous) throw new Error(`CHANGELOG.md names no release before ${current}`);
  const commit = resolveTag(`v${previous.version}`) ?? /commit `([0-9a-f]{7,40})`/.exec(previous.text)?.[1];
  if (!commit) throw new Error(`CHANGELOG.md names no commit for ${previous.version}, and there is no tag v${previous.version}`);
  return { version: previous.version, commit };
}

/** Finds (or builds once) the previous release's worktree and image. */
export function preparePreviousRelease(log: (line: string) => void = () => undefined): PreviousRelease {
  const current = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const named = previousReleaseOf(readFileSync(join(REPO_ROOT, 'CHANGELOG.md'), 'utf8'), current, (tag) => {
    try {
      return git(['rev-parse', '--verify', '--quiet', `${tag}^{commit}`]);
    } catch {
      return undefined;
    }
  });
  const commit = git(['rev-parse', '--verify', `${named.commit}^{commit}`]);
  const short = commit.slice(0, 7);
  const dir = join(RELEASES_DIR, short);
  const tag = `release-${named.version}-${short}`;
  const image = `${IMAGE_REPOSITORY}:${tag}`;
  const done = join(dir, '.latchkey-release-built');
  const checkedOut = (() => {
    try {
      // A worktree of another clone whose .git is gone reads as none.
      return existsSync(dir) && git(['rev-parse', 'HEAD'], dir) === commit;
    } catch {
      return false;
    }
  })();
  if (!checkedOut) {
    log(`previous release ${named.version}: a worktree at ${short} in ${dir}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(RELEASES_DIR, { recursive: true });
    git(['worktree', 'prune']);
    git(['worktree', 'add', '--detach', dir, commit]);
  }
  const imageExists = () => {
    try {
      execFileSync('podman', ['image', 'exists', image]);
      return true;
    } catch {
      return false;
    }
  };
  if (!checkedOut || !existsSync(done) || !imageExists()) {
    const started = Date.now();
    const run = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
      execFileSync('npm', args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 1_800_000 });
    log(`previous release ${named.version}: npm ci and npm run image (${image}) in ${dir}`);
    // The image is built inside podman (its own npm ci); `npm run image` needs only Node from node_modules
    // (dev/image/base.sh), so the production dependencies without install scripts: seconds, not minutes.
    if (!existsSync(join(dir, 'node_modules'))) run(['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund']);
    run(['run', 'image'], { ...process.env, LATCHKEY_IMAGE: image });
    writeFileSync(done, `${image}\n`);
    log(`previous release ${named.version} built in ${Date.now() - started} ms`);
  }
  return {
    version: named.version,
    commit,
    dir,
    chart: join(dir, 'charts', 'latchkey'),
    image,
    repository: IMAGE_REPOSITORY,
    tag,
  };
}
