/** The idempotency record's lease (lib/store/idempotency.ts) against DynamoDB Local. */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { claimIdempotencyKey, completeIdempotencyKey } from '../../lib/store/idempotency';

const scope = () => ({ owner: `ptr_${randomUUID()}`, endpoint: 'POST /api/v1/clients', idempotencyKey: randomUUID(), lockMs: 30_000 });

describe('idempotency leases', () => {
  it('lets a retry of the same body take over the key of a request that died, but never a different body', async () => {
    // Arrange: a request claims the key and dies (never completes)
    const key = scope();
    const t0 = Date.now();
    const first = await claimIdempotencyKey({ ...key, fingerprint: 'body-a', lockToken: 'first', nowMs: t0 });

    // Act: after its lease ran out, a different body, then the same body
    const otherBody = await claimIdempotencyKey({ ...key, fingerprint: 'body-b', lockToken: 'other', nowMs: t0 + 60_000 });
    const sameBody = await claimIdempotencyKey({ ...key, fingerprint: 'body-a', lockToken: 'retry', nowMs: t0 + 60_000 });

    // Assert
    expect(first).toEqual({ claimed: true });
    expect(otherBody).toEqual({ claimed: false, existing: { status: 'in_progress', fingerprint: 'body-a', lockExpiresAt: t0 + 30_000 } });
    expect(sameBody).toEqual({ claimed: true });
  });

  it('keeps a live lease: the same body while the first runs is refused (the chain answers 409)', async () => {
    const key = scope();
    const t0 = Date.now();
    await claimIdempotencyKey({ ...key, fingerprint: 'body-a', lockToken: 'first', nowMs: t0 });

    const concurrent = await claimIdempotencyKey({ ...key, fingerprint: 'body-a', lockToken: 'second', nowMs: t0 + 1_000 });

    expect(concurrent).toMatchObject({ claimed: false, existing: { status: 'in_progress' } });
  });

  it('completes only with the lease it holds, and then replays the stored response', async () => {
    const key = scope();
    const t0 = Date.now();
    await claimIdempotencyKey({ ...key, fingerprint: 'body-a', lockToken: 'first', nowMs: t0 });

    const stranger = await completeIdempotencyKey({ ...key, lockToken: 'not-mine' }, { statusCode: 201, body: '{"x":1}' });
    const owner = await completeIdempotencyKey({ ...key, lockToken: 'first' }, { statusCode: 201, body: '{"x":1}' });
    const later = await claimIdempotencyKey({ ...key, fingerprint: 'body-a', lockToken: 'later', nowMs: t0 + 60_000 });

    expect(stranger).toBe(false);
    expect(owner).toBe(true);
    expect(later).toEqual({ claimed: false, existing: { status: 'completed', fingerprint: 'body-a', response: { statusCode: 201, body: '{"x":1}' } } });
  });
});
