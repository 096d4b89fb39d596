/**
 * BILL: a Bill.com sign-in (username, password, organization, developer key) turned into a session at
 * import and in the form, signed in again before it lapses; the session and key go in headers of
 * their own on every proxied call.
 */
import { billLogin, billProxyHeaders, billSessionStrategy, checkBillSignIn } from './bill-session.js';
import type { AuthModeModule } from '../auth-mode.js';
import { formByExchange, importByExchange, type Exchange } from '../shared/exchange.js';
import { noFlatFields } from '../shared/flat-fields.js';
import { noAuthorization } from '../shared/injection.js';

const plain = (name: string) => ({ name, secret: false, required: true });
const secret = (name: string) => ({ name, secret: true, required: true });
const FIELDS = [plain('username'), secret('password'), plain('organization_id'), secret('dev_key')];

/** The sign-in checked, then signed in with. */
const signIn: Exchange = (call, given, path) => billLogin({ ...call, signIn: checkBillSignIn(given, path) });

export const bill: AuthModeModule = {
  mode: 'BILL',
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
