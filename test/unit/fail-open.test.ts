import { failOpen } from '../../lambdas/shared/rate-limit/fail-open';

describe('failOpen', () => {
  it('passes the decision through when the check works', async () => {
    expect(await failOpen('r1', async () => ({ allowed: false }))).toEqual({ allowed: false });
  });

  it('answers undefined (no decision: serve the request) when the check throws, whatever it threw', async () => {
    expect(await failOpen('r2', async () => Promise.reject(new Error('ProvisionedThroughputExceededException')))).toBeUndefined();
    expect(await failOpen('r3', () => Promise.reject('not an error'))).toBeUndefined();
    // A synchronous throw inside the check (e.g. a caller lookup) opens the gate too.
    expect(
      await failOpen('r4', async () => {
        throw new TypeError('bad key');
      }),
    ).toBeUndefined();
  });
});
