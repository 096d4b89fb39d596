/** Half of the simulated providers (the other half: providers-a.ts). One line per provider file. */
import type { ProviderSimulator } from './framework.js';

export const PROVIDERS_B: Array<() => ProviderSimulator> = [];
