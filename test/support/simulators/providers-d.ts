/** Simulated marketplaces (issue #57 parts 4 and 5: the shapes Latchkey expresses for them). One line per provider file. */
import type { ProviderSimulator } from './framework.js';
import { amazonSellingPartner } from './amazon-selling-partner.js';
import { ebay } from './ebay.js';
import { etsy } from './etsy.js';

export const PROVIDERS_D: Array<() => ProviderSimulator> = [amazonSellingPartner, etsy, ebay];
