/**
 * The capacity model's arithmetic (`bench/capacity/`): keys generalised to their shapes, and measured units projected
 * onto a load. The figures `npm run bench -- capacity` prints rest on these.
 */
import { describe, expect, it } from '@jest/globals';
import { type LoadModel, type MeasuredOperation, OPERATIONS, project } from '../../../bench/capacity/model';
import { shapeOf } from '../../../bench/capacity/shapes';
import { API_KEY_COPIES, keys, OUTBOX_SHARDS, PARKED_SHARDS, RECONCILIATION_SHARDS } from '../../../lib/store/keys';

const MODEL: LoadModel = {
  payments_per_second: 10_000,
  biggest_partner_payments_per_second: 3_000,
  partners: 200,
  biggest_client_share_of_partner: 0.1,
  api_keys_per_partner: 2,
  webhook_endpoints_per_partner: 2,
  refund_share: 0.05,
  dispute_share: 0.01,
  settlement_hours_per_day: 12,
  payments_per_batch: 1_000,
  transaction_reads_per_payment: 1,
  list_reads_per_partner_per_minute: { [OPERATIONS.transactionsPage]: 60 },
  outbox_sweeps_per_minute: 1,
  price_per_million: { write: 0.625, read: 0.125 },
};

describe('partition key shapes', () => {
  it('names each key the service builds by its shape, scope and shards', () => {
    expect(shapeOf('gsi1', keys.transactionsOf('p_1x2y'))).toMatchObject({ shape: 'TXS#<partner>', scope: 'partner', shards: 1 });
    expect(shapeOf('gsi2', keys.allTransactions)).toMatchObject({ shape: 'TXS', scope: 'platform' });
    expect(shapeOf('gsi4', keys.reconciliationPartition(7))).toMatchObject({ shape: 'RECON#<shard>', scope: 'platform', shards: RECONCILIATION_SHARDS });
    expect(shapeOf('gsi5', keys.partnerTransactionShard('p_1', 9))).toMatchObject({ shape: 'TXS#<partner>#<shard>', scope: 'partner', shards: 32 });
    expect(shapeOf('gsi6', keys.platformTransactionShard(41))).toMatchObject({ shape: 'TXS#<shard>', scope: 'platform', shards: 128 });
    expect(shapeOf('gsi5', keys.deliveryShard('p_1', 63))).toMatchObject({ shape: 'DELIVERIES#<partner>#<shard>', shards: 64 });
    expect(shapeOf('gsi5', keys.partnerAuditShard('p_1', 0))).toMatchObject({ shape: 'AUDIT#<partner>#<shard>', shards: 32 });
    expect(shapeOf('gsi6', keys.platformAuditShard(100))).toMatchObject({ shape: 'AUDIT#<shard>', scope: 'platform', shards: 128 });
    expect(shapeOf('gsi4', keys.parkedPartition('we_9', 3))).toMatchObject({ shape: 'PARKED#<endpoint>#<shard>', scope: 'partner', shards: PARKED_SHARDS });
    expect(shapeOf('gsi7', keys.outboxPartition(127))).toMatchObject({ shape: 'OUTBOX#<shard>', scope: 'platform', shards: OUTBOX_SHARDS });
    expect(shapeOf('gsi2', keys.legacyOutbox)).toMatchObject({ shape: 'OUTBOX', scope: 'platform', shards: 1 });
    expect(shapeOf('table', keys.rateWindow('p_1', 29_000_123, 7).pk)).toMatchObject({ shape: 'RATE#<partner>#<minute>[#<counter>]', scope: 'partner', shards: 12 });
    expect(shapeOf('table', keys.rateWindow('p_1', 29_000_123, 0).pk)).toMatchObject({ shape: 'RATE#<partner>#<minute>[#<counter>]', scope: 'partner', shards: 12 });
    expect(shapeOf('table', keys.idempotency('p_1', 'POST /api/v1/clients', 'a#b').pk)).toMatchObject({ scope: 'item' });
    // the key item is copy 0: it and its read copies are one shape, spread over all of them
    expect(API_KEY_COPIES).toBe(8);
    expect(shapeOf('table', keys.apiKey('9f8e').pk)).toMatchObject({ shape: 'APIKEY#<key hash>[#<copy>]', scope: 'apiKey', shards: 8 });
    expect(shapeOf('table', keys.apiKeyCopy('9f8e', 0).pk)).toMatchObject({ shape: 'APIKEY#<key hash>[#<copy>]', shards: 8 });
    expect(shapeOf('table', keys.apiKeyCopy('9f8e', 7).pk)).toMatchObject({ shape: 'APIKEY#<key hash>[#<copy>]', scope: 'apiKey', shards: 8 });
    expect(shapeOf('table', keys.apiKeyId('k_1').pk)).toMatchObject({ shape: 'APIKEYID#<id>', scope: 'item' });
    expect(shapeOf('table', keys.auditEvent('a_1').pk)).toMatchObject({ scope: 'item' });
    expect(shapeOf('gsi1', keys.auditEventsOf('p_1'))).toMatchObject({ shape: 'AUDIT#<partner>', scope: 'partner' });
  });

  it('stops at a key it does not know, naming it', () => {
    expect(() => shapeOf('gsi1', 'SOMETHING#new')).toThrow('gsi1 partition "SOMETHING#new"');
    expect(() => shapeOf('gsi3', keys.transactionsOf('p_1'))).toThrow('add it to bench/capacity/shapes.ts');
  });
});

describe('the projection', () => {
  const checkout: MeasuredOperation = {
    name: OPERATIONS.checkout,
    instances: 10,
    touches: [
      ...Array.from({ length: 10 }, (_, i) => ({ on: 'table', partition: keys.transaction(`svc_tx_${i}`).pk, access: 'write' as const, units: 2 })),
      { on: 'gsi2', partition: keys.allTransactions, access: 'write', units: 10 },
      { on: 'gsi1', partition: keys.transactionsOf('p_1'), access: 'write', units: 10 },
      { on: 'gsi4', partition: keys.reconciliationPartition(3), access: 'write', units: 12 },
      { on: 'gsi4', partition: keys.reconciliationPartition(40), access: 'write', units: 8 },
      // the checkouts' key reads, one copy each at random: the key item twice, copies 1-7 once or twice
      { on: 'table', partition: keys.apiKey('h').pk, access: 'read', units: 2 },
      ...[1, 2, 3, 4, 5, 6, 7].map((copy) => ({ on: 'table', partition: keys.apiKeyCopy('h', copy).pk, access: 'read' as const, units: copy <= 1 ? 2 : 1 })),
    ],
  };
  const page: MeasuredOperation = { name: OPERATIONS.transactionsPage, instances: 2, touches: [{ on: 'gsi1', partition: keys.transactionsOf('p_1'), access: 'read', units: 12 }] };
  const projection = project([checkout, page], MODEL);
  const load = (on: string, shape: string, access = 'write') => projection.loads.find((candidate) => candidate.on === on && candidate.shape === shape && candidate.access === access);

  it("puts every payment's units on a platform-wide key, the biggest partner's on a partner's, spread over shards", () => {
    // 1 unit a checkout on TXS, at 10,000 checkouts/s
    expect(load('gsi2', 'TXS')).toMatchObject({ unitsPerSecond: 10_000, share: 10 });
    // the biggest partner's 3,000/s on its TXS#<partner>
    expect(load('gsi1', 'TXS#<partner>')).toMatchObject({ unitsPerSecond: 3_000, share: 3 });
    // 2 units a checkout over the reconciliation's shards: 10,000 × 2 / 128
    expect(RECONCILIATION_SHARDS).toBe(128);
    expect(load('gsi4', 'RECON#<shard>')?.unitsPerSecond).toBeCloseTo(156.25, 1);
    // an API key's share: the partner's 3,000/s over its 2 keys, 1 read unit each, over the key's 8 items (the key
    // item's reads and its copies' summed into one load)
    expect(load('table', 'APIKEY#<key hash>[#<copy>]', 'read')?.unitsPerSecond).toBe(187.5);
    expect(projection.loads.filter((candidate) => candidate.shape.startsWith('APIKEY#'))).toHaveLength(1);
  });

  it('counts an item its own runs only, and reads a minute apart from the payment rate', () => {
    expect(load('table', 'TX#<id>')).toMatchObject({ scope: 'item', unitsPerSecond: 2, perPayment: 0 });
    // 6 units a page, 60 pages a minute by one partner: 6 units/s on its key, whatever the payment rate
    expect(load('gsi1', 'TXS#<partner>', 'read')).toMatchObject({ unitsPerSecond: 6, perPayment: 0, fixed: 6, byOperation: { [OPERATIONS.transactionsPage]: 6 } });
    expect(load('gsi2', 'TXS')?.byOperation).toEqual({ [OPERATIONS.checkout]: 10_000 });
  });

  it('finds the hottest key and the rates at which the first key reaches its limit', () => {
    expect(projection.hottest).toMatchObject({ on: 'gsi2', shape: 'TXS' });
    // TXS takes 1 unit per payment: 1,000 payments/s fill it
    expect(projection.ceilingPaymentsPerSecond).toBe(1_000);
    // one partner alone: TXS and TXS#<partner> both take 1 unit per payment of it
    expect(projection.ceilingOnePartnerPerSecond).toBe(1_000);
  });

  it('sums the units of a payment and prices them', () => {
    // per checkout: 20 + 10 + 10 + 20 = 60 write units over 10 runs; reads: 1 per checkout, and 200 partners × 1 page/s × 6 / 10,000
    expect(projection.writeUnitsPerPayment).toBe(6);
    expect(projection.readUnitsPerPayment).toBeCloseTo(1 + (200 * 6) / 10_000, 2);
    expect(projection.costPerMillionPayments).toBeCloseTo(6 * 0.625 + 1.12 * 0.125, 2);
  });

  it('spreads a batch`s own writes over the payments a batch holds under the model, and a line`s over each payment', () => {
    // Arrange: a measured run of 40 payments in 1 batch: 8 units on the batches list (the batch's record), 40 on the
    // settlement index (one a line)
    const run = {
      name: OPERATIONS.settlementRun,
      instances: 40,
      batches: 1,
      touches: [
        { on: 'gsi2', partition: keys.allSettlementBatches, access: 'write' as const, units: 8 },
        { on: 'gsi3', partition: keys.settlementShard('p_1', 5), access: 'write' as const, units: 40 },
      ],
    };

    const loads = project([run], MODEL).loads;

    // 8 units a batch of 1,000 payments, run twice a day's payments over 12 hours: 10,000 × 2 × 8 / 1,000
    expect(loads.find((candidate) => candidate.shape === 'BATCHES')?.unitsPerSecond).toBe(160);
    // 1 unit a payment, the biggest partner's 3,000 a second, twice, over its 32 shards
    expect(loads.find((candidate) => candidate.shape === 'SETTLE#<partner>#<shard>')?.unitsPerSecond).toBe(187.5);
  });

  it('refuses an operation the load model gives no cadence', () => {
    expect(() => project([{ name: 'something new', instances: 1, touches: [] }], MODEL)).toThrow('No cadence for operation "something new"');
  });
});
