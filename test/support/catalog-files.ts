/** Reads the shipped provider catalog (config/providers) for the catalog tests. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import { REPO_ROOT } from '../../dev/control-plane.js';

export const CATALOG_DIR = join(REPO_ROOT, 'config/providers');
export const CRD_PATH = join(REPO_ROOT, 'crds/latchkey.dev_providers.yaml');

export interface CatalogFile {
  file: string;
  text: string;
  /** Every YAML document of the file (a manifest has exactly one). */
  docs: unknown[];
}

export interface ProviderManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string } & Record<string, unknown>;
  spec: ProviderSpec & Record<string, unknown>;
}

export function catalogFileNames(): string[] {
  return readdirSync(CATALOG_DIR)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort();
}

export function readCatalogFiles(): CatalogFile[] {
  return catalogFileNames().map((file) => {
    const text = readFileSync(join(CATALOG_DIR, file), 'utf8');
    return { file, text, docs: loadAllYaml(text) as unknown[] };
  });
}

export function readCatalog(): ProviderManifest[] {
  return readCatalogFiles().map((f) => f.docs[0] as ProviderManifest);
}

/** A shipped Provider manifest's spec (config/providers/NAME.yaml). */
export const catalogSpec = (name: string): ProviderSpec =>
  (loadAllYaml(readFileSync(join(CATALOG_DIR, `${name}.yaml`), 'utf8'))[0] as { spec: ProviderSpec }).spec;
