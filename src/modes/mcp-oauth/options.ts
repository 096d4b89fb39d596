/** MCP_OAUTH2's options (`spec.mcp`): the remote MCP server; its authorization is discovered from it. */
import { z } from 'zod';
import { isLoopback } from '../../auth/oauth2-client.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import type { ModeOptions } from '../auth-mode.js';
import { definedOnly } from '../shared/options-view.js';

export const McpOptions = z.object({
  serverUrl: z
    .string()
    .max(2048)
    .refine((u) => URL.canParse(u) && (u.startsWith('https://') || (u.startsWith('http://') && isLoopback(u))), {
      message: 'an https URL (http only on the loopback interface)',
    }),
  scopes: z.array(z.string().min(1).max(256)).max(50).optional(),
  docs: z.array(z.string().max(2048)).max(8).optional(),
});

/** The Provider's MCP server URL (the CRD requires it of MCP_OAUTH2 Providers). */
export function serverUrlOf(spec: ProviderSpec): string {
  const url = spec.mcp?.serverUrl;
  if (!url) throw new Error('MCP_OAUTH2 provider without spec.mcp.serverUrl');
  return url;
}

export const mcpOptions: ModeOptions = {
  field: 'mcp',
  schema: McpOptions,
  shownAs: 'mcp',
  view: (b) => definedOnly({ server_url: b.serverUrl, scopes: b.scopes }),
  viewSchema: z
    .object({ server_url: z.string(), scopes: z.array(z.string()).optional() })
    .optional()
    .describe('MCP_OAUTH2: the remote MCP server (its authorization server, client registration and scopes are discovered from it)'),
};
