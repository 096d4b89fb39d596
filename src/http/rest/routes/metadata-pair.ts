/**
 * A metadata endpoint is two routes on one path: POST replaces the metadata, PATCH merges keys into it
 * (`/connections/metadata`, `/connection/:connectionId/metadata`). A route file says its names and
 * its route once, for both.
 */
import type { MetadataMode } from '../../../connections/metadata.js';
import { defineRoute, type RouteSpec } from './define.js';

/** What the OpenAPI document calls each of the two routes. */
export interface MetadataRouteNames {
  operationId: string;
  summary: string;
}

/** The POST (replace) and PATCH (merge) routes, in that order, tagged `Metadata`; `handle` is each one's handler. */
export function metadataPair<P, Q, B>(
  names: Readonly<Record<MetadataMode, MetadataRouteNames>>,
  spec: Omit<RouteSpec<P, Q, B>, 'method' | 'operationId' | 'summary' | 'tag' | 'handle'>,
  handle: (mode: MetadataMode) => RouteSpec<P, Q, B>['handle'],
): RouteSpec[] {
  const pair = [['post', 'replace'] as const, ['patch', 'merge'] as const];
  return pair.map(([method, mode]) => defineRoute<P, Q, B>({ method, ...names[mode], tag: 'Metadata', ...spec, handle: handle(mode) }));
}
