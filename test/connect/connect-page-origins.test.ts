/**
 * The Nango-protocol Connect UI page (`/connect/`) is public: without a session token it must not show
 * any tenant's data. It once put every Environment's `connectUI.allowedOrigins` into its
 * `frame-ancestors` header and its page; now only the origins of the Environment whose session token
 * the address carries appear. Without one any page may frame it (Nango's SDK sends the token only by
 * postMessage), and the session API accepts the token only for the origins its Environment allows
 * (`embedder`), answering yes or no without naming the listed origins.
 */
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment, type TestEnvironment } from '../../dev/fixtures.js';
import { sealSession } from '../support/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const ORIGIN_A = 'http://127.0.0.1:41001';
const ORIGIN_B = 'http://localhost:41002';

let nsA: Awaited<ReturnType<typeof createTestNamespace>>;
let nsB: Awaited<ReturnType<typeof createTestNamespace>>;
let envA: TestEnvironment;
let replica: Replica;

beforeAll(async () => {
  nsA = await createTestNamespace(kc, 'page-origins-a');
  nsB = await createTestNamespace(kc, 'page-origins-b');
  envA = await createEnvironment(kc, nsA.name, { connectUI: { allowedOrigins: [ORIGIN_A] } });
  await createEnvironment(kc, nsB.name, { connectUI: { allowedOrigins: [ORIGIN_B] } });
  replica = await startReplica(kc, { namespaces: [nsA.name, nsB.name], selfBaseUrl: true });
  await eventually(
    () =>
      replica.ctx.catalog.listEnvironments(nsA.name)[0]?.spec.connectUI &&
      replica.ctx.catalog.listEnvironments(nsB.name)[0]?.spec.connectUI &&
      replica.ctx.catalog.readSecretValue(nsA.name, 'test-keys', 'secretKey'),
  );
});

afterAll(async () => {
  await replica?.stop();
  await nsA?.delete();
  await nsB?.delete();
});

interface Page {
  status: number;
  csp: string;
  /** Every header and the body, as one text to search. */
  everything: string;
}

async function page(query: string): Promise<Page> {
  const res = await fetch(`${replica.url}/connect/${query}`);
  const headers = [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
  return { status: res.status, csp: res.headers.get('content-security-policy') ?? '', everything: `${headers}\n${await res.text()}` };
}

const sessionOfA = () => sealSession(envA.secretKey, { namespace: nsA.name, endUser: { id: 'origins-user' }, allowedIntegrations: [] });

describe('/connect/ (the Nango-protocol page) and the Environments’ allowed origins', () => {
  it('shows no Environment’s origins without a session token; any page may frame it', async () => {
    for (const query of ['', `?apiURL=${encodeURIComponent(replica.url)}&lang=en`, `?namespace=${nsA.name}`]) {
      const p = await page(query);
      expect(p.status).toBe(200);
      expect(p.csp).toContain('frame-ancestors *');
      expect(p.everything).not.toContain(ORIGIN_A);
      expect(p.everything).not.toContain(ORIGIN_B);
    }
  });

  it("with environment A's session token shows A's origins and not B's", async () => {
    const p = await page(`?session_token=${encodeURIComponent(sessionOfA())}&apiURL=${encodeURIComponent(replica.url)}`);
    expect(p.status).toBe(200);
    expect(p.csp).toContain(`frame-ancestors ${ORIGIN_A}`);
    expect(p.everything).toContain(ORIGIN_A);
    expect(p.everything).not.toContain(ORIGIN_B);
    expect(p.everything).toContain(`"namespace":"${nsA.name}"`);
  });

  it('refuses a token that does not open (401) or names another namespace than asked (400), framed by no one', async () => {
    const forged = await page(`?session_token=${encodeURIComponent(sessionOfA().slice(0, -4) + 'AAAA')}`);
    expect(forged.status).toBe(401);
    expect(forged.csp).toContain("frame-ancestors 'none'");
    expect(forged.everything).toContain('invalid_session');
    const other = await page(`?session_token=${encodeURIComponent(sessionOfA())}&namespace=${nsB.name}`);
    expect(other.status).toBe(400);
    expect(other.csp).toContain("frame-ancestors 'none'");
    for (const p of [forged, other]) {
      expect(p.everything).not.toContain(ORIGIN_A);
      expect(p.everything).not.toContain(ORIGIN_B);
    }
  });

  it('gives the session to the origins A allows only, and says no without naming them', async () => {
    const token = sessionOfA();
    const session = (embedders: string[]) =>
      fetch(`${replica.url}/connect/api/session?${new URLSearchParams(embedders.map((e) => ['embedder', e]))}`, {
        headers: { authorization: `Bearer ${token}` },
      });
    expect((await session([ORIGIN_A])).status).toBe(200);
    expect((await session([])).status).toBe(200);
    for (const embedders of [[ORIGIN_B], [ORIGIN_A, ORIGIN_B], ['null'], [`${ORIGIN_A}/`]]) {
      const res = await session(embedders);
      expect(res.status).toBe(403);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'origin_not_allowed' } });
      expect(text).not.toContain(ORIGIN_A);
    }
    const tooMany = await session(Array.from({ length: 17 }, () => ORIGIN_A));
    expect(tooMany.status).toBe(400);
  });
});
