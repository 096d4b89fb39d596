/** More simulated providers (issue #57 part 5; the others: providers-a.ts, providers-b.ts). One line per provider file. */
import type { ProviderSimulator } from './framework.js';
import { bitbucket } from './bitbucket.js';
import { bullhorn } from './bullhorn.js';
import { discord } from './discord.js';
import { gitlab } from './gitlab.js';
import { miro } from './miro.js';
import { spotify } from './spotify.js';
import { webflow } from './webflow.js';

export const PROVIDERS_C: Array<() => ProviderSimulator> = [gitlab, discord, spotify, miro, bitbucket, webflow, bullhorn];
