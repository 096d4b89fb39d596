import type { Logger } from '../platform/log.js';
import type { ConnectionResource, IntegrationResource } from '../k8s/resources.js';
import type { CatalogStatus, CatalogStore } from '../k8s/store.js';
import { apiMessage } from '../k8s/errors.js';

/**
 * Annotation on an Integration: its provider keeps answering refreshes with tokens shorter than the
 * refresh floor. Written and removed by the refresh scheduler (through {@link ShortLivedTokens}),
 * which does not own the Integration's conditions; the Integration reconciler reads it into
 * `ProviderTokensShortLived`.
 */
export const SHORT_LIVED_TOKENS_ANNOTATION = 'latchkey.dev/short-lived-tokens';

/** Scheduled refreshes in a row of one connection answering a short-lived token before the Integration is flagged. */
export const SHORT_LIVED_RUN = 3;

export interface ShortLivedReport {
  /** The lifetime of the last such token (seconds, rounded down; 0 for `expires_in: 0`). */
  lifetimeSeconds: number;
  floorSeconds: number;
  at: string;
}

/** The report on the Integration, if it carries a readable one. */
export function shortLivedReport(integration: IntegrationResource): ShortLivedReport | undefined {
  const raw = integration.metadata.annotations?.[SHORT_LIVED_TOKENS_ANNOTATION];
  if (!raw) return undefined;
  try {
    const r = JSON.parse(raw) as Partial<ShortLivedReport>;
    return typeof r.lifetimeSeconds === 'number' && typeof r.floorSeconds === 'number' && typeof r.at === 'string'
      ? { lifetimeSeconds: r.lifetimeSeconds, floorSeconds: r.floorSeconds, at: r.at }
      : undefined;
  } catch {
    return undefined;
  }
}

/** What records the Warning Event on a flagged Integration (ConnectionEvents of src/k8s/events.ts). */
export interface ShortLivedTokensEvents {
  recordIntegration(integration: IntegrationResource, input: { type: 'Warning'; reason: string; message: string }): Promise<string>;
}

export interface ShortLivedTokensOptions {
  catalog: Pick<CatalogStore, 'getIntegration'>;
  catalogStatus: Pick<CatalogStatus, 'annotateIntegration'>;
  events?: ShortLivedTokensEvents;
  floorMs: number;
  now: () => number;
  logger: Logger;
  run?: number;
}

/**
 * Counts, per connection, the scheduled refreshes in a row whose token lives shorter than the floor;
 * after {@link SHORT_LIVED_RUN} it flags the connection's Integration (the annotation and a Warning
 * Event), and a refresh answering a normal lifetime lifts the flag. Only facts go on the Integration:
 * its reconciler derives the condition. The end user is not blamed: nothing is written on the connection.
 */
export class ShortLivedTokens {
  /** Keys whose last refreshes answered short-lived tokens (a normal lifetime removes its key). */
  private readonly runs = new Map<string, number>();

  constructor(private readonly opts: ShortLivedTokensOptions) {}

  /** A scheduled refresh of the connection stored a token that lives `lifetimeMs`. */
  async observe(key: string, connection: ConnectionResource, lifetimeMs: number): Promise<void> {
    const { catalog, floorMs } = this.opts;
    const namespace = connection.metadata.namespace!;
    const name = connection.spec.integration;
    const integration = catalog.getIntegration(namespace, name);
    const flagged = integration?.metadata.annotations?.[SHORT_LIVED_TOKENS_ANNOTATION] !== undefined;
    if (floorMs <= 0 || lifetimeMs >= floorMs) {
      this.runs.delete(key);
      if (flagged) await this.annotate(namespace, name, undefined);
      return;
    }
    const run = (this.runs.get(key) ?? 0) + 1;
    this.runs.set(key, run);
    if (run < (this.opts.run ?? SHORT_LIVED_RUN) || flagged || !integration) return;
    const report: ShortLivedReport = {
      lifetimeSeconds: Math.max(0, Math.floor(lifetimeMs / 1000)),
      floorSeconds: floorMs / 1000,
      at: new Date(this.opts.now()).toISOString(),
    };
    const written = await this.annotate(namespace, name, JSON.stringify(report));
    if (!written) return;
    await this.opts.events
      ?.recordIntegration(written, {
        type: 'Warning',
        reason: 'ProviderTokensShortLived',
        message:
          `The provider answered ${run} refreshes in a row with tokens living ${report.lifetimeSeconds} s, less than the ` +
          `refresh floor of ${report.floorSeconds} s: such tokens are refreshed at most once per floor and may be used ` +
          'expired. Check the provider or its app settings; the end users need do nothing.',
      })
      .catch((err: unknown) => this.opts.logger.warn({ namespace, integration: name, err: apiMessage(err) }, 'could not record the Event'));
  }

  forget(key: string): void {
    this.runs.delete(key);
  }

  private async annotate(namespace: string, name: string, value: string | undefined): Promise<IntegrationResource | undefined> {
    try {
      return await this.opts.catalogStatus.annotateIntegration(namespace, name, SHORT_LIVED_TOKENS_ANNOTATION, value);
    } catch (err) {
      this.opts.logger.warn(
        { namespace, integration: name, err: apiMessage(err) },
        'could not record short-lived tokens on the integration',
      );
      return undefined;
    }
  }
}
