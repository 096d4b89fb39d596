/** More simulated providers (issue #57 part 5: OAuth 2 providers of the usual shape; the others: providers-a.ts to providers-d.ts). One line per provider file. */
import type { ProviderSimulator } from './framework.js';
import { clickup } from './clickup.js';
import { figma } from './figma.js';
import { monday } from './monday.js';
import { pinterest } from './pinterest.js';
import { reddit } from './reddit.js';
import { strava } from './strava.js';
import { twitch } from './twitch.js';
import { typeform } from './typeform.js';

export const PROVIDERS_E: Array<() => ProviderSimulator> = [figma, typeform, strava, clickup, monday, pinterest, reddit, twitch];
