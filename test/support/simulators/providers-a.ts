/** Half of the simulated providers (the other half: providers-b.ts). One line per provider file. */
import type { ProviderSimulator } from './framework.js';
import { slack } from './slack.js';

export const PROVIDERS_A: Array<() => ProviderSimulator> = [slack];
