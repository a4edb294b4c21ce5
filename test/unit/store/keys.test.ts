import { describe, expect, it } from '@jest/globals';
import { keys, SETTLEMENT_SHARDS } from '../../../lib/store/keys';

describe('key builders', () => {
  it('prefix every key with its entity so that entities never collide', () => {
    expect(keys.partner('p_1')).toEqual({ pk: 'PARTNER#p_1', sk: 'PROFILE' });
    expect(keys.client('p_1', 'merchant-1')).toEqual({ pk: 'PARTNER#p_1', sk: 'CLIENT#merchant-1' });
    expect(keys.transaction('svc_tx_1')).toEqual({ pk: 'TX#svc_tx_1', sk: 'TX' });
    expect(keys.idempotency('p_1', 'POST /clients', 'k-1').pk).toBe('IDEMPOTENCY#p_1#POST /clients#k-1');
  });

  it('order time-ordered sort keys by creation time, then id', () => {
    const earlier = keys.transactionIndex('p_1', 'svc_tx_b', '2026-11-21T10:00:00.000Z').gsi5sk ?? '';
    const later = keys.transactionIndex('p_1', 'svc_tx_a', '2026-11-21T10:00:00.001Z').gsi5sk ?? '';
    const sameMsOtherId = keys.transactionIndex('p_1', 'svc_tx_c', '2026-11-21T10:00:00.000Z').gsi5sk ?? '';

    expect([later, sameMsOtherId, earlier].sort()).toEqual([earlier, sameMsOtherId, later]);
  });

  it('group the settlement index by client and currency, on the shard of the payment, its entries beside its sale', () => {
    const sale = keys.settlementIndex('p_1', 'merchant-1', 'EUR', '2026-11-20T00:00:00.000Z', 'svc_tx_1');
    const refund = keys.settlementIndex('p_1', 'merchant-1', 'EUR', '2026-11-20T00:00:00.000Z', 'svc_tx_1', 'refund#500');

    expect(sale).toEqual({ gsi3pk: keys.settlementShardOf('p_1', 'svc_tx_1'), gsi3sk: 'merchant-1#EUR#2026-11-20T00:00:00.000Z#svc_tx_1' });
    expect(refund).toEqual({ gsi3pk: sale.gsi3pk, gsi3sk: 'merchant-1#EUR#2026-11-20T00:00:00.000Z#svc_tx_1#refund#500' });
    expect(sale.gsi3pk).toMatch(/^SETTLE#p_1#0[0-3]\d$/);
  });

  it('spread the payments of one partner over every settlement shard', () => {
    const shards = new Set(Array.from({ length: 2_000 }, (_, n) => keys.settlementShardOf('p_1', `svc_tx_${n}`)));

    expect([...shards].sort()).toEqual(keys.settlementPartitions('p_1').slice(0, SETTLEMENT_SHARDS).sort());
    expect(keys.settlementPartitions('p_1').at(-1)).toBe('SETTLE#p_1');
  });
});
