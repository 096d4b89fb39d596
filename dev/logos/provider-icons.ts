/**
 * Which simple-icons icon is a shipped Provider's logo: only an exact match (the icon's slug is the
 * provider's name without separators, or its title is the provider's display name, ignoring case and
 * punctuation; a variant named by the catalog's naming rule, `<name>-<mode word>` such as `okta-api-key`
 * or `paypal-sandbox-cc`, matches as its base name), and only icons under CC0 (simple-icons marks the few under other licences). No match,
 * no logo: the Connect UI then shows the provider's initial.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface SimpleIcon {
  title: string;
  slug: string;
  hex: string;
  license?: { type: string };
}

export interface ProviderIcon {
  provider: string;
  slug: string;
  title: string;
  hex: string;
  /** The SVG path (viewBox 0 0 24 24). */
  path: string;
}

const require = createRequire(import.meta.url);
// The package exports no package.json: its directory is two levels above its main module.
const packageDir = dirname(require.resolve('simple-icons'));

export function simpleIconsVersion(): string {
  return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;
}

function simpleIcons(): SimpleIcon[] {
  return JSON.parse(readFileSync(join(packageDir, 'data/simple-icons.json'), 'utf8')) as SimpleIcon[];
}

function iconPath(slug: string): string {
  const svg = readFileSync(join(packageDir, 'icons', `${slug}.svg`), 'utf8');
  const d = /<path d="([^"]+)"/.exec(svg)?.[1];
  if (!d) throw new Error(`simple-icons ${slug}.svg has no single path`);
  return d;
}

const normal = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The mode words of variant names (config/providers/README.md, "Names and aliases"), plus the renamed variants' own. */
const VARIANT_SUFFIX = /-(api-key|api-token|basic|oauth|cc|jwt|pat|sandbox|data-center|server|v2|app-api|management|mcp)$/;

/** The provider name a variant's name is built on (`paypal-sandbox-cc` -> `paypal`), or the name itself. */
export function baseName(name: string): string {
  let base = name;
  while (VARIANT_SUFFIX.test(base)) base = base.replace(VARIANT_SUFFIX, '');
  return base || name;
}

/** Each provider that has an icon, by name. */
export function providerIcons(providers: Array<{ name: string; displayName: string }>): ProviderIcon[] {
  const icons = simpleIcons().filter((i) => !i.license || i.license.type === 'CC0-1.0');
  const bySlug = new Map(icons.map((i) => [i.slug, i]));
  const byTitle = new Map(icons.map((i) => [normal(i.title), i]));
  const found: ProviderIcon[] = [];
  for (const p of [...providers].sort((a, b) => a.name.localeCompare(b.name))) {
    const icon = bySlug.get(normal(p.name)) ?? byTitle.get(normal(p.displayName)) ?? bySlug.get(normal(baseName(p.name)));
    if (icon) found.push({ provider: p.name, slug: icon.slug, title: icon.title, hex: icon.hex, path: iconPath(icon.slug) });
  }
  return found;
}
