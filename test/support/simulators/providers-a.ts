/** Half of the simulated providers (the other half: providers-b.ts). One line per provider file. */
import type { ProviderSimulator } from './framework.js';
import { confluence, jira } from './atlassian.js';
import { github } from './github.js';
import { gmail, googleCalendar, googleDrive } from './google.js';
import { microsoftTeams, outlook } from './microsoft.js';
import { hubspot } from './hubspot.js';
import { pipedrive } from './pipedrive.js';
import { quickbooks } from './quickbooks.js';
import { salesforce } from './salesforce.js';
import { xero } from './xero.js';
import { zohoBiginCanada, zohoCrm } from './zoho.js';
import { slack } from './slack.js';

export const PROVIDERS_A: Array<() => ProviderSimulator> = [
  slack,
  salesforce,
  hubspot,
  googleCalendar,
  gmail,
  googleDrive,
  outlook,
  microsoftTeams,
  github,
  jira,
  confluence,
  quickbooks,
  xero,
  zohoCrm,
  zohoBiginCanada,
  pipedrive,
];
