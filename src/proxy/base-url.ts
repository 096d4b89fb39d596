/**
 * The provider base URL a connection's proxied requests go under: the Provider's `proxy.baseUrl`
 * with the connection's configuration filled in and its hosts checked (src/catalog). Filling and
 * checking parse URLs and build host patterns, so the result is kept per Provider object and
 * Connection spec object: the informer cache replaces these objects when they change and never
 * edits them, so a new version is a cache miss and nothing stale is ever served.
 */
import { fillProviderUrl } from '../catalog/connection-config.js';
import { MissingTemplateValueError } from '../catalog/template.js';
import { LatchkeyError } from '../domain/errors.js';
import type { ConnectionSpec, ProviderResource } from '../k8s/resources.js';

export class BaseUrls {
  private readonly filled = new WeakMap<ProviderResource, WeakMap<ConnectionSpec, string>>();

  /** The filled base URL, or a 400 (no base URL, a configuration value missing or pointing elsewhere). */
  of(provider: ProviderResource, connection: ConnectionSpec): string {
    let byConnection = this.filled.get(provider);
    const known = byConnection?.get(connection);
    if (known !== undefined) return known;
    const url = fill(provider, connection);
    if (!byConnection) this.filled.set(provider, (byConnection = new WeakMap()));
    byConnection.set(connection, url);
    return url;
  }
}

function fill(provider: ProviderResource, connection: ConnectionSpec): string {
  const template = provider.spec.proxy?.baseUrl;
  if (!template)
    throw new LatchkeyError('invalid_input', 'proxy_not_configured', `The provider "${provider.metadata.name}" has no proxy base URL`);
  try {
    return fillProviderUrl(provider.spec, template, connection.connectionConfig);
  } catch (err) {
    if (err instanceof MissingTemplateValueError) {
      throw new LatchkeyError(
        'invalid_input',
        'missing_connection_config',
        `The provider base URL needs ${err.message.replace(/^connection configuration is missing /, 'connection configuration ')}`,
      );
    }
    throw err;
  }
}
