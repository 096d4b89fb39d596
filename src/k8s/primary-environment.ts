import type { EnvironmentResource } from './resources.js';

/** The Environment that speaks for a namespace: the oldest (then the first by name); the others are duplicates. */
export function primaryOf(envs: readonly EnvironmentResource[]): EnvironmentResource | undefined {
  return [...envs].sort(
    (a, b) =>
      String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)) ||
      a.metadata.name.localeCompare(b.metadata.name),
  )[0];
}
