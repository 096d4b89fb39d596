import { ConnectionCondition, ConnectionReason, findCondition, setConditions, type Condition } from '../../src/domain/conditions.js';

const T0 = Date.UTC(2026, 0, 1, 12);
const T1 = T0 + 60_000;
const ready = (status: Condition['status'], reason: string) => ({ type: ConnectionCondition.Ready, status, reason, message: reason });

describe('setConditions', () => {
  it('moves lastTransitionTime only when the status changes', () => {
    const first = setConditions(undefined, [ready('False', ConnectionReason.RefreshFailing)], 1, T0);
    // To the second, as Kubernetes writes its own.
    expect(first[0]).toMatchObject({ status: 'False', lastTransitionTime: '2026-01-01T12:00:00Z', observedGeneration: 1 });

    // Same status, another reason and generation: reason and generation follow, the time stays.
    const sameStatus = setConditions(first, [ready('False', ConnectionReason.TokenExpired)], 2, T1);
    expect(sameStatus[0]).toMatchObject({
      reason: ConnectionReason.TokenExpired,
      observedGeneration: 2,
      lastTransitionTime: '2026-01-01T12:00:00Z',
    });

    const flipped = setConditions(sameStatus, [ready('True', ConnectionReason.Ready)], 2, T1);
    expect(flipped[0]).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T12:01:00Z' });
  });

  it('keeps the order of existing conditions, appends new ones, and leaves the input as it was', () => {
    const existing = setConditions(
      undefined,
      [ready('True', 'Ready'), { type: ConnectionCondition.IntegrationReady, status: 'True', reason: 'IntegrationReady', message: 'm' }],
      1,
      T0,
    );
    const copy = structuredClone(existing);
    const next = setConditions(
      existing,
      [
        { type: ConnectionCondition.NeedsReauthorization, status: 'False', reason: 'CredentialsAccepted', message: 'm' },
        ready('False', 'IntegrationNotFound'),
      ],
      1,
      T1,
    );
    expect(next.map((c) => c.type)).toEqual(['Ready', 'IntegrationReady', 'NeedsReauthorization']);
    expect(findCondition(next, 'Ready')?.reason).toBe('IntegrationNotFound');
    expect(existing).toEqual(copy);
  });

  it('bounds the message and omits observedGeneration when there is no generation', () => {
    const [c] = setConditions(undefined, [{ ...ready('False', 'TokenExpired'), message: 'x'.repeat(40_000) }], undefined, T0);
    expect(c!.message).toHaveLength(32_000);
    expect(c).not.toHaveProperty('observedGeneration');
  });
});
