/** Which release the upgrade e2e starts from: the one CHANGELOG.md names before package.json's version. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { previousReleaseOf } from '../../dev/previous-release.js';

const changelog = (sections: string) => `# Changelog\n\n## [Unreleased]\n\n${sections}`;
const noTags = () => undefined;

describe('the previous release', () => {
  it('is the newest version below the current one, at the commit its section names (until it is tagged)', () => {
    const text = changelog(
      '## [0.3.0] - 2027-01-10\n\nText.\n\n## [0.2.0] - 2026-12-06\n\nIts build: commit `deadbee`.\n\n## [0.1.0] - 2026-11-27\n\nThe first build: commit `a11717f`.\n',
    );
    expect(previousReleaseOf(text, '0.2.0', noTags)).toEqual({ version: '0.1.0', commit: 'a11717f' });
    expect(previousReleaseOf(text, '0.3.0', noTags)).toEqual({ version: '0.2.0', commit: 'deadbee' });
  });

  it('takes the tag v<version> when there is one', () => {
    const text = changelog('## [0.2.0] - 2026-12-06\n\n## [0.1.0] - 2026-11-27\n\ncommit `a11717f`.\n');
    expect(previousReleaseOf(text, '0.2.0', (tag) => (tag === 'v0.1.0' ? 'f'.repeat(40) : undefined))).toEqual({
      version: '0.1.0',
      commit: 'f'.repeat(40),
    });
  });

  it('refuses a changelog with no earlier release, or one naming no commit', () => {
    expect(() => previousReleaseOf(changelog('## [0.1.0] - 2026-11-27\n'), '0.1.0', noTags)).toThrow('no release before 0.1.0');
    expect(() =>
      previousReleaseOf(changelog('## [0.2.0] - 2026-12-06\n\n## [0.1.0] - 2026-11-27\n\nNo commit.\n'), '0.2.0', noTags),
    ).toThrow('no commit for 0.1.0');
  });

  it("is 0.1.0 at a11717f in this repository's changelog", () => {
    const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(previousReleaseOf(readFileSync(join(REPO_ROOT, 'CHANGELOG.md'), 'utf8'), version, noTags)).toEqual({
      version: '0.1.0',
      commit: 'a11717f',
    });
  });
});
