import { readOrUndefined } from '../../src/k8s/errors.js';

/** A failed API call as client-node reports it (its status as `code`). */
const failed = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

describe('readOrUndefined', () => {
  it('gives what the read gives', async () => {
    await expect(readOrUndefined(() => Promise.resolve({ name: 'a' }))).resolves.toEqual({ name: 'a' });
  });

  it('gives undefined when the API server answers 404', async () => {
    await expect(readOrUndefined(() => Promise.reject(failed(404)))).resolves.toBeUndefined();
  });

  it('throws any other failure as it is', async () => {
    const forbidden = failed(403);
    await expect(readOrUndefined(() => Promise.reject(forbidden))).rejects.toBe(forbidden);
    const network = new Error('ECONNRESET');
    await expect(readOrUndefined(() => Promise.reject(network))).rejects.toBe(network);
  });
});
