/**
 * A partner update's condition (lib/store/partners.ts) against DynamoDB Local: it holds on the partner's revision,
 * not on `updatedAt`, so an update made from a stale read is refused even when every write carries the same
 * millisecond; and a refused update writes neither the change nor its audit event.
 */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { newAuditEvent } from '../../../lib/domain/audit';
import type { Partner } from '../../../lib/domain/partner';
import { listAuditEvents } from '../../../lib/store/audit-events';
import { createPartner, getPartnerForUpdate, updatePartner } from '../../../lib/store/partners';

const SAME_MS = '2026-11-24T01:00:00.000Z';

const updateEvent = (partnerId: string, name: string) =>
  newAuditEvent({ type: 'partner.updated', partnerId, resourceType: 'partner', resourceId: partnerId, details: { fields: 'name', name } }, new Date(SAME_MS));

describe('a partner update', () => {
  it('is refused when made from a stale read, though both writes are stamped with the same millisecond', async () => {
    // Arrange: a partner, read, updated once from that read
    const partnerId = `ptr_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const partner: Partner = { partnerId, name: 'Rev', status: 'active', kycStatus: 'approved', serviceFeePercentage: 1, rateLimitPerMinute: null, branding: null, createdAt: SAME_MS, updatedAt: SAME_MS };
    await createPartner(partner, newAuditEvent({ type: 'partner.created', partnerId, resourceType: 'partner', resourceId: partnerId, details: {} }, new Date(SAME_MS)));
    const first = (await getPartnerForUpdate(partnerId))!;
    const applied = await updatePartner(first, { name: 'A' }, SAME_MS, updateEvent(partnerId, 'A'));
    const second = (await getPartnerForUpdate(partnerId))!;

    // Act: one more update from the second read; then one from the second read again (now stale), same millisecond
    const fresh = await updatePartner(second, { name: 'B' }, SAME_MS, updateEvent(partnerId, 'B'));
    const stale = await updatePartner(second, { name: 'C' }, SAME_MS, updateEvent(partnerId, 'C'));
    const gone = await updatePartner({ ...second, partner: { ...second.partner, partnerId: `${partnerId}x` } }, { name: 'D' }, SAME_MS, updateEvent(`${partnerId}x`, 'D'));

    // Assert
    const stored = (await getPartnerForUpdate(partnerId))!;
    const events = await listAuditEvents({ partnerId, type: 'partner.updated', limit: 10 });
    expect({ applied, fresh, stale, gone }).toEqual({ applied: 'updated', fresh: 'updated', stale: 'changed', gone: 'gone' });
    expect([first.revision, second.revision, stored.revision, stored.partner.name]).toEqual([0, 1, 2, 'B']);
    expect(events.items.map((event) => event.details.name).sort()).toEqual(['A', 'B']);
  });
});
