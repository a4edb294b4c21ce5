/** The idempotency record's lease (lib/store/idempotency.ts) against DynamoDB Local. */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { claimIdempotencyKey, completeIdempotencyKey, IDEMPOTENCY_TTL_SECONDS, releaseIdempotencyKey } from '../../../lib/store/idempotency';

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
    expect(first).toEqual({ claimed: true, nonce: expect.stringMatching(/^[0-9a-z]{24}$/) });
    expect(otherBody).toEqual({ claimed: false, existing: { status: 'in_progress', fingerprint: 'body-a', lockExpiresAt: t0 + 30_000 } });
    // The retry is the same attempt: the record's nonce (which its svc_tx_id is derived from) is kept.
    expect(sameBody).toEqual({ claimed: true, nonce: (first as { nonce: string }).nonce });
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

  it('keeps the nonce across a release, for any body; a new record (another key, or past its 24 hours) gets a new one', async () => {
    // Arrange: a request claims the key and fails in a way that releases it
    const key = scope();
    const t0 = Date.now();
    const first = await claimIdempotencyKey({ ...key, fingerprint: 'body-a', lockToken: 'first', nowMs: t0 });
    await releaseIdempotencyKey({ ...key, lockToken: 'first' });

    // Act: the next claim (another body: a released key is free), a second key, and the first key after it expired
    const afterRelease = await claimIdempotencyKey({ ...key, fingerprint: 'body-b', lockToken: 'second', nowMs: t0 + 1_000 });
    const otherKey = await claimIdempotencyKey({ ...scope(), fingerprint: 'body-a', lockToken: 'third', nowMs: t0 });
    await completeIdempotencyKey({ ...key, lockToken: 'second' }, { statusCode: 201, body: '{}' });
    const afterExpiry = await claimIdempotencyKey({ ...key, fingerprint: 'body-b', lockToken: 'fourth', nowMs: t0 + (IDEMPOTENCY_TTL_SECONDS + 10) * 1000 });
    const whileRenewed = await claimIdempotencyKey({ ...key, fingerprint: 'body-b', lockToken: 'fifth', nowMs: t0 + (IDEMPOTENCY_TTL_SECONDS + 11) * 1000 });

    // Assert
    const nonceOf = (claim: unknown) => (claim as { nonce: string }).nonce;
    expect(afterRelease).toEqual({ claimed: true, nonce: nonceOf(first) });
    expect(otherKey).toMatchObject({ claimed: true });
    expect(nonceOf(otherKey)).not.toBe(nonceOf(first));
    expect(afterExpiry).toMatchObject({ claimed: true });
    expect(nonceOf(afterExpiry)).not.toBe(nonceOf(first));
    expect(whileRenewed).toMatchObject({ claimed: false, existing: { status: 'in_progress', fingerprint: 'body-b' } });
  });
});
