/**
 * BILL: a Bill.com sign-in (username, password, organization, developer key) turned into a session at
 * import and in the form, signed in again before it lapses; the session and key go in headers of
 * their own on every proxied call.
 */
import { z } from 'zod';
import { billLogin, billProxyHeaders, billSessionStrategy, checkBillSignIn } from './bill-session.js';
import type { AuthModeModule } from '../auth-mode.js';
import { formByExchange, importByExchange, type Exchange } from '../shared/exchange.js';
import { noFlatFields } from '../shared/flat-fields.js';
import { noAuthorization } from '../shared/injection.js';
import { shownTimestamp } from '../shared/credential-schemas.js';

const plain = (name: string) => ({ name, secret: false, required: true });
const secret = (name: string) => ({ name, secret: true, required: true });
const FIELDS = [plain('username'), secret('password'), plain('organization_id'), secret('dev_key')];

/** The sign-in checked, then signed in with. */
const signIn: Exchange = (call, given, path) => billLogin({ ...call, signIn: checkBillSignIn(given, path) });

export const bill: AuthModeModule = {
  mode: 'BILL',
  credentialSchemas: {
    import: z
      .strictObject({
        type: z.literal('BILL'),
        username: z.string().min(1).max(320),
        password: z.string().min(1).max(1024),
        organization_id: z.string().min(1).max(64),
        dev_key: z.string().min(1).max(256),
      })
      .describe('A Bill.com sign-in; a session is opened at once (a refusal is a 400)'),
    shown: z.object({
      type: z.literal('BILL'),
      username: z.string(),
      password: z.string(),
      organization_id: z.string(),
      dev_key: z.string(),
      session_id: z.string().describe('The Bill.com session (sent as the sessionId header); signed in again before expires_at'),
      user_id: z.string().optional(),
      expires_at: shownTimestamp,
    }),
  },
  fromImport: importByExchange(signIn),
  fromFlatImport: (_deps, input) => noFlatFields(input),
  connect: {
    flow: 'form',
    fields: () => [...FIELDS],
    credentials: formByExchange('BILL', signIn),
  },
  refresh: billSessionStrategy,
  // No Authorization header: the session goes in Bill.com's own headers.
  proxy: {
    accessTokenField: 'access_token',
    refreshesOnUse: true,
    signsFormBody: false,
    authorization: noAuthorization,
    defaultHeaders: billProxyHeaders,
  },
  providerProblems: (spec) => (spec.tokenUrl ? [] : ['BILL providers need spec.tokenUrl (the Bill.com login URL)']),
  integration: { clientBeforeConnect: false, accepts: [] },
};
