/** Every simulated provider the end-to-end test runs (test/providers/real-providers.test.ts). */
import type { ProviderSimulator } from './framework.js';
import { PROVIDERS_A } from './providers-a.js';
import { PROVIDERS_B } from './providers-b.js';
import { PROVIDERS_C } from './providers-c.js';
import { PROVIDERS_D } from './providers-d.js';
import { PROVIDERS_E } from './providers-e.js';
import { clover } from './clover.js';
import { tiktokAds } from './tiktok-ads.js';
import { jiraDataCenter } from './jira-data-center.js';
import { confluenceDataCenter } from './confluence-data-center.js';

export const SIMULATORS: Array<() => ProviderSimulator> = [
  ...PROVIDERS_A,
  ...PROVIDERS_B,
  ...PROVIDERS_C,
  ...PROVIDERS_D,
  ...PROVIDERS_E,
  clover,
  tiktokAds,
  jiraDataCenter,
  confluenceDataCenter,
];
