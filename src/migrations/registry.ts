import type { ConnectionMigration } from './migration.js';
import { zohoDataCentre } from './zoho-data-centre.js';

/** Every migration the image ships, by the name `latchkey migrate` takes. */
export const MIGRATIONS: ReadonlyMap<string, ConnectionMigration> = new Map([zohoDataCentre].map((m) => [m.name, m]));
