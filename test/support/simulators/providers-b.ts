/** Half of the simulated providers (the other half: providers-a.ts). One line per provider file. */
import type { ProviderSimulator } from './framework.js';
import { airtable } from './airtable.js';
import { asana } from './asana.js';
import { box } from './box.js';
import { calendly } from './calendly.js';
import { docusign } from './docusign.js';
import { dropbox } from './dropbox.js';
import { intercom } from './intercom.js';
import { linear } from './linear.js';
import { mailchimp } from './mailchimp.js';
import { notion } from './notion.js';
import { shopify } from './shopify.js';
import { stripeConnect } from './stripe-connect.js';
import { trello } from './trello.js';
import { zendesk } from './zendesk.js';
import { zoom } from './zoom.js';

export const PROVIDERS_B: Array<() => ProviderSimulator> = [
  notion,
  zoom,
  docusign,
  intercom,
  zendesk,
  shopify,
  stripeConnect,
  linear,
  asana,
  dropbox,
  box,
  mailchimp,
  airtable,
  calendly,
  trello,
];
