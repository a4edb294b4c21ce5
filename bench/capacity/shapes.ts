/**
 * Partition keys generalised to their shape (`TXS#p_8x2…` → `TXS#<partner>`), and what share of the traffic one key
 * of each shape takes: the capacity model projects a load onto the hottest key of every shape. Each shape is made by
 * the key builders of `lib/store/keys.ts` from placeholder values, so a key the service writes that no shape here
 * matches is a key this file does not know yet: the model stops and names it rather than leave it out.
 */
import { rateWindowOf } from '../../lib/domain/rate-limit';
import { API_KEY_COPIES, AUDIT_LIST_SHARDS, DELIVERY_LIST_SHARDS, keys, OUTBOX_SHARDS, PARKED_SHARDS, RECONCILIATION_SHARDS, SETTLEMENT_SHARDS, TRANSACTION_LIST_SHARDS } from '../../lib/store/keys';

/**
 * Whose traffic one key of a shape takes. `platform`: every partner's; `partner`: one partner's (a webhook
 * endpoint of its, sent every event, takes the partner's whole traffic too); `apiKey`: one API key's; `client`: one merchant's;
 * `item`: one entity's own (a transaction, a delivery), a few writes in its life whatever the load.
 */
export type Scope = 'platform' | 'partner' | 'apiKey' | 'client' | 'item';

export interface Shape {
  /** Where the key is a partition key: `table` (pk) or an index (`gsi1` ...). */
  on: string;
  /** The shape as shown: the key with its variable parts as `<name>`. */
  shape: string;
  scope: Scope;
  /** The fixed shard count in the key (the load of its scope is spread over that many partitions). */
  shards: number;
  /** Written once a settlement batch (its record's lists, its lease), not once a payment. */
  perBatch?: boolean;
  pattern: RegExp;
}

/** A shape written once a settlement batch. */
const perBatch = (made: Shape): Shape => ({ ...made, perBatch: true });

// Placeholders no real key contains: each is replaced by a pattern for its part.
const P = '\u0001partner\u0001';
const ID = '\u0001id\u0001';
const HASH = '\u0001key\u0001';
const ENDPOINT = '\u0001endpoint\u0001';
const ROUTE = '\u0001route\u0001';
const NUMBER = 987_654_321;
const SHARD = 63;

const PARTS: Array<[string, string, string]> = [
  [P, '[^#]+', '<partner>'],
  [HASH, '[^#]+', '<key hash>'],
  [ENDPOINT, '[^#]+', '<endpoint>'],
  [ROUTE, '[^#]+', '<route>'],
  [ID, '.+', '<id>'],
  [String(NUMBER), '\\d+', '<minute>'],
];

/** `named` names the shape instead of the key built (two keys counted as one shape share it). */
function shape(on: string, built: string, scope: Scope, shards = 1, named?: string): Shape {
  // The shard number ends the key (zero-padded or not): its trailing digits.
  const shardText = shards > 1 ? /\d+$/.exec(built)?.[0] : undefined;
  let pattern = built.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  let shown = built;
  for (const [placeholder, regex, name] of PARTS) {
    pattern = pattern.replaceAll(placeholder, regex);
    shown = shown.replaceAll(placeholder, name);
  }
  if (shardText !== undefined) {
    pattern = `${pattern.slice(0, pattern.lastIndexOf(shardText))}\\d+`;
    shown = `${shown.slice(0, shown.lastIndexOf(shardText))}<shard>`;
  }
  return { on, shape: named ?? shown, scope, shards, pattern: new RegExp(`^${pattern}$`) };
}

/** The counters of a partner's rate window, as one shape. */
const RATE_COUNTERS = 'RATE#<partner>#<minute>[#<counter>]';

/** The key item and the read copies of an API key, as one shape. */
const API_KEY_ITEMS = 'APIKEY#<key hash>[#<copy>]';

/** Every partition key shape the service writes or reads, on the table and on each index. */
export const SHAPES: Shape[] = [
  // the table
  shape('table', keys.partner(P).pk, 'partner'),
  // An API key's reads take one of its items at random: the key item (copy 0) or a read copy. Both shapes carry one name,
  // so the model sums their units into one load and spreads it over all of them (measured separately, the key item's
  // eighth of the reads would be divided by 8 again).
  shape('table', keys.apiKey(HASH).pk, 'apiKey', API_KEY_COPIES, API_KEY_ITEMS),
  shape('table', keys.apiKeyCopy(HASH, API_KEY_COPIES - 1).pk, 'apiKey', API_KEY_COPIES, API_KEY_ITEMS),
  shape('table', keys.apiKeyId(ID).pk, 'item'),
  shape('table', keys.transaction(ID).pk, 'item'),
  shape('table', keys.paymentIntent(ID).pk, 'item'),
  shape('table', keys.idempotency(P, ROUTE, ID).pk, 'item'),
  // A partner allowed the model's 3,000 requests a second (180,000 a minute) has its window split this many ways; its
  // counter 0 keeps the unsplit key, so both shapes carry one name, as for the API key's items.
  { ...shape('table', keys.rateWindow(P, NUMBER, 0).pk, 'partner', 1, RATE_COUNTERS), shards: rateWindowOf(180_000).counters },
  shape('table', keys.rateWindow(P, NUMBER, SHARD).pk, 'partner', rateWindowOf(180_000).counters, RATE_COUNTERS),
  shape('table', keys.processorEvent(ID).pk, 'item'),
  shape('table', keys.webhookDelivery(ID).pk, 'item'),
  shape('table', keys.auditEvent(ID).pk, 'item'),
  shape('table', keys.settlementBatch(ID).pk, 'item'),
  // A group's lease: one merchant's (its client and currency are the id's part).
  perBatch(shape('table', keys.settlementGroup(P, ID, '').pk.slice(0, -1), 'client', 1, 'SETTLEGROUP#<partner>#<client>#<currency>')),
  // A run scope's continuation waiting to run: a partner's, or every partner's (the schedule's).
  shape('table', keys.settlementContinuation(ID).pk, 'partner'),
  // gsi1: newest first per owner
  shape('gsi1', keys.allPartners, 'platform'),
  shape('gsi1', keys.apiKeysOf(P), 'partner'),
  shape('gsi1', keys.platformApiKeys, 'platform'),
  shape('gsi1', keys.clientsOf(P), 'partner'),
  shape('gsi1', keys.transactionsOf(P), 'partner'),
  shape('gsi1', keys.deliveriesOf(P), 'partner'),
  shape('gsi1', keys.auditEventsOf(P), 'partner'),
  perBatch(shape('gsi1', keys.settlementBatchesOf(P), 'partner')),
  perBatch(shape('gsi1', keys.settlementBuildsOf(P), 'partner')),
  // gsi2: platform-wide lists, and the outbox before its shards (read until the deliveries written then are gone)
  shape('gsi2', keys.allTransactions, 'platform'),
  shape('gsi2', keys.legacyOutbox, 'platform'),
  shape('gsi2', keys.allAuditEvents, 'platform'),
  perBatch(shape('gsi2', keys.allSettlementBatches, 'platform')),
  // gsi3: waiting for settlement, on a partner's shards, and the partition before them
  shape('gsi3', keys.settlementShard(P, SHARD), 'partner', SETTLEMENT_SHARDS),
  shape('gsi3', keys.settlementPartitionBeforeShards(P), 'partner'),
  // A building batch's reserved lines: one batch's own.
  shape('gsi3', keys.settlementBuildPartition(ID), 'item'),
  // gsi5, gsi6: sharded lists, a partner's and the platform's
  shape('gsi5', keys.partnerTransactionShard(P, SHARD), 'partner', TRANSACTION_LIST_SHARDS.partner),
  shape('gsi6', keys.platformTransactionShard(SHARD), 'platform', TRANSACTION_LIST_SHARDS.platform),
  shape('gsi5', keys.deliveryShard(P, SHARD), 'partner', DELIVERY_LIST_SHARDS),
  shape('gsi5', keys.partnerAuditShard(P, SHARD), 'partner', AUDIT_LIST_SHARDS.partner),
  shape('gsi6', keys.platformAuditShard(SHARD), 'platform', AUDIT_LIST_SHARDS.platform),
  // gsi4: the reconciliation's watch and parked deliveries
  shape('gsi4', keys.reconciliationPartition(SHARD), 'platform', RECONCILIATION_SHARDS),
  shape('gsi4', keys.parkedPartition(ENDPOINT, SHARD), 'partner', PARKED_SHARDS),
  // gsi7: the outbox
  shape('gsi7', keys.outboxPartition(SHARD), 'platform', OUTBOX_SHARDS),
];

/** The shape of partition `partition` on `on`; throws for a key no shape matches. */
export function shapeOf(on: string, partition: string): Shape {
  const found = SHAPES.find((candidate) => candidate.on === on && candidate.pattern.test(partition));
  if (found === undefined) throw new Error(`The capacity model knows no key shape for ${on} partition "${partition}": add it to bench/capacity/shapes.ts`);
  return found;
}
