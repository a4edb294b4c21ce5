/**
 * Key builders for the single table: the only place key strings are made (docs/data-model.md is the map).
 * Pure functions; a repository spreads the result into the item it writes, or uses it to read.
 *
 * Conventions: values are prefixed by entity (`PARTNER#p_123`); time-ordered sort keys start with an ISO 8601
 * UTC timestamp (lexical order = time order) and end with the entity id, so two items created in the same
 * millisecond still have distinct, stable keys. Lists are Queries on these keys, newest first
 * (`ScanIndexForward: false`).
 */

export interface TableKey {
  pk: string;
  sk: string;
}

export type IndexKeys = Partial<Record<`gsi${1 | 2 | 3 | 4 | 5 | 6}${'pk' | 'sk'}`, string>>;

const timeOrdered = (createdAt: string, id: string) => `${createdAt}#${id}`;

/**
 * The reconciliation index's shard count. Each payment writes the index twice (its keys set while it waits, removed
 * when it moves on), each time inside a transaction (the checkout's, the processor event's): 4 units a payment
 * (measured: `npm run bench -- capacity`). At the design target of 10,000 payments a second, 128 shards keep each
 * partition near 310 units a second, under half of DynamoDB's 1,000 (decisions.md §11). Fixed: the reader queries
 * every shard. (It was 64: a transaction written then sits in a shard numbered below 64, which the reader still reads.)
 */
export const RECONCILIATION_SHARDS = 128;

/**
 * The outbox index's shard count. A payment makes about 2 deliveries; a delivery writes the index when it is created
 * (1 unit, in the processor event's transaction) and when it finishes (2 units, in its outcome's transaction), and a
 * claim within its relay time writes nothing: measured (`npm run bench -- capacity`), 495 units a second a shard at
 * 10,000 payments a second, just under half a partition's 1,000 (decisions.md §11). Under a backlog, claims come late
 * and move the key (about 330 more a shard): more shards, or cheaper moves, are still to come. Fixed: the sweep queries
 * every shard.
 */
export const OUTBOX_SHARDS = 128;

/** An outbox entry's index keys (gsi7, keys only): always both. */
export type OutboxIndexKeys = Record<'gsi7pk' | 'gsi7sk', string>;

/** The shard of `id` among `shards`: FNV-1a of the id, so an item keeps its shard for life. */
function shardOf(id: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/** The reconciliation shard of a transaction, by its `svc_tx_id`. */
export const reconciliationShardOf = (svcTxId: string): number => shardOf(svcTxId, RECONCILIATION_SHARDS);

/**
 * The parked-deliveries index's shard count per endpoint. A delivery enters the index once while its endpoint cannot
 * take it and leaves it once (woken, attempted or failed): one partner's 3,000 payments a second to a dead endpoint
 * make 6,000 index writes a second, 375 per shard, under half a partition's 1,000 (decisions.md §11).
 */
export const PARKED_SHARDS = 16;

/**
 * The transaction lists' shard counts. A transaction enters each list index when created and is written there again
 * only when its status changes (the index projects only the lists' filters): two writes per payment, each in a
 * transaction (the checkout's, the processor event's), so 4 units, and a little more for refunds and disputes
 * (measured: `npm run bench -- capacity`). One partner's 3,000 payments a second then make about 12,600 units a second
 * over its 32 shards (394 each), and every partner's 10,000 about 42,000 over the platform's 128 (328 each): each under
 * half a partition's 1,000 (decisions.md §11). A list reads every shard and merges them by the sort key.
 */
export const TRANSACTION_LIST_SHARDS = { partner: 32, platform: 128 } as const;

/**
 * A partner's webhook deliveries list: each delivery enters it when created and is written there again when its status
 * changes (succeeded or failed), both inside transactions: 4 units a delivery, about 2.1 deliveries a payment with two
 * endpoints. One partner's 3,000 payments a second make about 25,000 units a second: 64 shards take 394 each.
 */
export const DELIVERY_LIST_SHARDS = 64;

/**
 * The audit lists: an event is written once (inside the transaction of what it records, 2 units an index), about 2.1
 * a payment (each delivery's outcome). One partner's make about 12,600 units a second over its 32 shards, every
 * partner's about 42,000 over the platform's 128: each under half a partition's 1,000.
 */
export const AUDIT_LIST_SHARDS = { partner: 32, platform: 128 } as const;

/**
 * How many items hold each API key: its key item and `API_KEY_COPIES - 1` read copies. Every authenticated request reads
 * its key strongly consistent (a revoked key stops at once, so no cache may stand in): at one partner's 3,000 requests
 * a second, about 2 key reads a payment (the checkout's, a read of the transaction) of 1 unit each (a small item), one
 * item would take about 6,300 units a second (measured: `npm run bench -- capacity`), twice a partition's 3,000
 * (decisions.md §11). Each read takes one of the 8 at random: about 800 a second each, a quarter of the limit.
 */
export const API_KEY_COPIES = 8;

/**
 * The settlement index's shard count per partner. A payment's sale enters the index on success and leaves it when a
 * batch's build reserves it (both writes of the whole transaction item: the index projects ALL, which the run and the
 * balances read), and each refund or dispute entry enters and leaves it too: one partner's 3,000 payments a second made
 * about 13,900 units a second on its one partition (measured: `npm run bench -- capacity`), 14 times a partition's
 * limit. Over 32 shards, about 434 each, under half the limit (decisions.md §11). A payment's entries share its shard
 * (by its `svc_tx_id`), so each shard holds whole payments; readers query every shard, and the partition that held the
 * index before the shards (`SETTLE#<partner>`, emptied by `npm run backfill:settlement-index`), and merge them by the
 * sort key.
 */
export const SETTLEMENT_SHARDS = 32;

const shardKey = (shard: number) => String(shard).padStart(3, '0');

/** One item's identity as one string (its table key): to take an item once that two reads may both return. */
export const itemId = (item: { pk?: unknown; sk?: unknown }): string => `${String(item.pk)}\u0000${String(item.sk)}`;

export const keys = {
  partner: (partnerId: string): TableKey => ({ pk: `PARTNER#${partnerId}`, sk: 'PROFILE' }),
  /** All partners, newest first (admin list). */
  allPartners: 'PARTNERS',
  partnerIndex: (partnerId: string, createdAt: string): IndexKeys => ({
    gsi1pk: keys.allPartners,
    gsi1sk: timeOrdered(createdAt, partnerId),
  }),

  /** An API key is found by the SHA-256 of its value: the key itself is never stored. */
  apiKey: (keyHash: string): TableKey => ({ pk: `APIKEY#${keyHash}`, sk: 'APIKEY' }),
  /**
   * Read copy `copy` of an API key, 0 to {@link API_KEY_COPIES} - 1: copy 0 is the key item itself, so a reader picks
   * any of them alike. Each copy is its own partition (a sort key under one `pk` would share its partition).
   */
  apiKeyCopy: (keyHash: string, copy: number): TableKey => (copy === 0 ? keys.apiKey(keyHash) : { pk: `APIKEY#${keyHash}#${copy}`, sk: 'APIKEY' }),
  /**
   * The `key_id` -> hash pointer, written in the same transaction as the key, so that revocation by id is a
   * strongly consistent read (a GSI could miss a key created a moment ago).
   */
  apiKeyId: (keyId: string): TableKey => ({ pk: `APIKEYID#${keyId}`, sk: 'APIKEYID' }),
  /** The gsi1 partition of a partner's keys (partner-scoped keys only), newest first: the admin console lists them to revoke. */
  apiKeysOf: (partnerId: string) => `APIKEYS#${partnerId}`,
  apiKeyIndex: (partnerId: string, keyId: string, createdAt: string): IndexKeys => ({
    gsi1pk: keys.apiKeysOf(partnerId),
    gsi1sk: timeOrdered(createdAt, keyId),
  }),
  /** The gsi1 partition of the platform-wide keys (no partner's), newest first: the admin console lists them to revoke. */
  platformApiKeys: 'APIKEYS',
  platformApiKeyIndex: (keyId: string, createdAt: string): IndexKeys => ({
    gsi1pk: keys.platformApiKeys,
    gsi1sk: timeOrdered(createdAt, keyId),
  }),

  /** A client lives under its partner; `client_id` is the partner's own identifier, unique per partner. */
  client: (partnerId: string, clientId: string): TableKey => ({ pk: `PARTNER#${partnerId}`, sk: `CLIENT#${clientId}` }),
  /** The gsi1 partition holding a partner's clients. */
  clientsOf: (partnerId: string) => `CLIENTS#${partnerId}`,
  clientIndex: (partnerId: string, clientId: string, createdAt: string): IndexKeys => ({
    gsi1pk: keys.clientsOf(partnerId),
    gsi1sk: timeOrdered(createdAt, clientId),
  }),

  transaction: (svcTxId: string): TableKey => ({ pk: `TX#${svcTxId}`, sk: 'TX' }),
  /**
   * Before the sharded lists: the gsi1 partition of a partner's transactions and the gsi2 partition of all of them
   * (every index projected). Transactions written then stay there until `npm run backfill:transaction-lists` moves
   * them; the lists read these partitions too.
   */
  transactionsOf: (partnerId: string) => `TXS#${partnerId}`,
  allTransactions: 'TXS',
  /** A shard of a partner's transactions (gsi5), and a shard of every partner's (gsi6). */
  partnerTransactionShard: (partnerId: string, shard: number) => `TXS#${partnerId}#${shardKey(shard)}`,
  platformTransactionShard: (shard: number) => `TXS#${shardKey(shard)}`,
  /** A transaction's place in its partner's list and in the platform's, newest first, on the shards of its `svc_tx_id`. */
  transactionIndex: (partnerId: string, svcTxId: string, createdAt: string): IndexKeys => ({
    gsi5pk: keys.partnerTransactionShard(partnerId, shardOf(svcTxId, TRANSACTION_LIST_SHARDS.partner)),
    gsi5sk: timeOrdered(createdAt, svcTxId),
    gsi6pk: keys.platformTransactionShard(shardOf(svcTxId, TRANSACTION_LIST_SHARDS.platform)),
    gsi6sk: timeOrdered(createdAt, svcTxId),
  }),
  /**
   * Sparse settlement index: present only while an item waits for settlement (a succeeded, unsettled
   * transaction, or a pending negative adjustment), grouped by client and currency, oldest first.
   */
  settlementShard: (partnerId: string, shard: number) => `SETTLE#${partnerId}#${shardKey(shard)}`,
  /** The shard where a payment's entries wait: its sale and every entry after it, by its `svc_tx_id`. */
  settlementShardOf: (partnerId: string, svcTxId: string) => keys.settlementShard(partnerId, shardOf(svcTxId, SETTLEMENT_SHARDS)),
  /** The one partition of a partner's settlement index before the shards: still read, until the backfill empties it. */
  settlementPartitionBeforeShards: (partnerId: string) => `SETTLE#${partnerId}`,
  /** Every partition a reader of a partner's settlement index queries: its shards, and the one before them. */
  settlementPartitions: (partnerId: string): string[] => [
    ...Array.from({ length: SETTLEMENT_SHARDS }, (_, shard) => keys.settlementShard(partnerId, shard)),
    keys.settlementPartitionBeforeShards(partnerId),
  ],
  /** A waiting entry's place: its payment's shard; sorted by client, currency, the payment's creation, the entry. */
  settlementIndex: (partnerId: string, clientId: string, currency: string, createdAt: string, svcTxId: string, entryKey?: string): IndexKeys => ({
    gsi3pk: keys.settlementShardOf(partnerId, svcTxId),
    gsi3sk: `${clientId}#${currency}#${timeOrdered(createdAt, entryKey === undefined ? svcTxId : `${svcTxId}#${entryKey}`)}`,
  }),
  /**
   * A ledger entry of a payment after its sale (decisions.md §5a), beside its transaction; `key` is the entry's
   * stable key (`refund#<level>`, `chargeback#<dispute>` ...). It waits in the settlement index under its
   * payment's creation time, next to the sale.
   */
  ledgerEntry: (svcTxId: string, key: string): TableKey => ({ pk: `TX#${svcTxId}`, sk: `ENTRY#${key}` }),
  /** Written before the ledger: a whole-payment refund or chargeback of an already settled transaction. */
  adjustment: (svcTxId: string, kind: 'refund' | 'chargeback'): TableKey => ({
    pk: `TX#${svcTxId}`,
    sk: `ADJUSTMENT#${kind}`,
  }),
  /**
   * Sparse reconciliation index (gsi4, keys only): present only while the reconciliation watches a transaction
   * (`lib/domain/reconciliation.ts`: pending, or initialized, with an intent; failed, for a while), removed by the
   * write that moves it out. Its partition is one of {@link RECONCILIATION_SHARDS} fixed shards chosen by the
   * `svc_tx_id` (no partition shared by every payment's writes, decisions.md §11); its sort key the time its next look
   * is due, so a shard lists what is due first.
   */
  reconciliationPartition: (shard: number) => `RECON#${String(shard).padStart(2, '0')}`,
  reconciliationIndex: (svcTxId: string, dueAt: string): IndexKeys => ({
    gsi4pk: keys.reconciliationPartition(reconciliationShardOf(svcTxId)),
    gsi4sk: timeOrdered(dueAt, svcTxId),
  }),
  /** The due time a reconciliation sort key holds. */
  reconciliationDueAt: (gsi4sk: string) => gsi4sk.slice(0, gsi4sk.lastIndexOf('#')),
  /** Links a processor payment intent to its transaction; its conditional create keeps the link unique. */
  paymentIntent: (paymentIntentId: string): TableKey => ({ pk: `INTENT#${paymentIntentId}`, sk: 'INTENT' }),

  idempotency: (partnerId: string, endpoint: string, idempotencyKey: string): TableKey => ({
    pk: `IDEMPOTENCY#${partnerId}#${endpoint}#${idempotencyKey}`,
    sk: 'IDEMPOTENCY',
  }),
  /**
   * A counter of a partner's fixed one-minute window (window start in epoch minutes): one, or for a high limit
   * several (`lib/domain/rate-limit.ts`), so that no item takes every request of a big partner.
   */
  rateWindow: (partnerId: string, windowStartMinute: number, counter: number): TableKey => ({
    // Counter 0 keeps the key the one counter had before windows were split, so a deploy changes no partner's count.
    pk: counter === 0 ? `RATE#${partnerId}#${windowStartMinute}` : `RATE#${partnerId}#${windowStartMinute}#${counter}`,
    sk: 'RATE',
  }),
  /** Marks a processor event id as processed (each event is applied once). */
  processorEvent: (eventId: string): TableKey => ({ pk: `PROCESSOR_EVENT#${eventId}`, sk: 'PROCESSOR_EVENT' }),

  webhookEndpoint: (partnerId: string, endpointId: string): TableKey => ({
    pk: `PARTNER#${partnerId}`,
    sk: `WEBHOOK_ENDPOINT#${endpointId}`,
  }),
  webhookEndpointPrefix: (partnerId: string) => ({ pk: `PARTNER#${partnerId}`, skPrefix: 'WEBHOOK_ENDPOINT#' }),
  webhookDelivery: (deliveryId: string): TableKey => ({ pk: `DELIVERY#${deliveryId}`, sk: 'DELIVERY' }),
  /**
   * Sparse parked-deliveries index (gsi4, keys only): present only while a delivery waits for its endpoint to take
   * it (its breaker open, or every lease of a slow endpoint taken), oldest first within each of the endpoint's
   * {@link PARKED_SHARDS} shards, so the consumer wakes the longest-waiting first.
   */
  parkedPrefix: (endpointId: string) => `PARKED#${endpointId}#`,
  parkedPartition: (endpointId: string, shard: number) => `${keys.parkedPrefix(endpointId)}${shard}`,
  parkedIndex: (endpointId: string, deliveryId: string, createdAt: string): IndexKeys => ({
    gsi4pk: keys.parkedPartition(endpointId, shardOf(deliveryId, PARKED_SHARDS)),
    gsi4sk: timeOrdered(createdAt, deliveryId),
  }),
  /** The delivery and its creation time a parked sort key was built from. */
  parkedEntry: (gsi4sk: string) => ({ deliveryId: gsi4sk.slice(gsi4sk.lastIndexOf('#') + 1), createdAt: gsi4sk.slice(0, gsi4sk.lastIndexOf('#')) }),
  /** Before the sharded lists: the gsi1 partition that held a partner's deliveries (the list still reads it). */
  deliveriesOf: (partnerId: string) => `DELIVERIES#${partnerId}`,
  /** A shard of a partner's deliveries (gsi5). */
  deliveryShard: (partnerId: string, shard: number) => `DELIVERIES#${partnerId}#${shardKey(shard)}`,
  /**
   * The shard of a payment's deliveries: chosen by its `svc_tx_id`, so that every delivery of one payment is in one
   * shard (found by one Query), while the payments spread the partner's deliveries over all of them.
   */
  transactionDeliveriesShard: (partnerId: string, svcTxId: string) => keys.deliveryShard(partnerId, shardOf(svcTxId, DELIVERY_LIST_SHARDS)),
  webhookDeliveryIndex: (partnerId: string, svcTxId: string, deliveryId: string, createdAt: string): IndexKeys => ({
    gsi5pk: keys.transactionDeliveriesShard(partnerId, svcTxId),
    gsi5sk: timeOrdered(createdAt, deliveryId),
  }),

  /**
   * The transactional outbox (sparse gsi7, keys only): a delivery carries it from the write that creates it until it
   * is finished (succeeded or failed), sorted by when the relay should next look at it. A delivery whose message was
   * lost anywhere on the way (a crash before the enqueue, a lost local queue) is found here once that time has passed
   * and is enqueued again. Its partition is one of {@link OUTBOX_SHARDS} fixed shards chosen by the delivery id, so no
   * partition takes every partner's deliveries (decisions.md §11).
   */
  outboxPartition: (shard: number) => `OUTBOX#${shard}`,
  outboxIndex: (deliveryId: string, relayAfter: string): OutboxIndexKeys => ({
    gsi7pk: keys.outboxPartition(shardOf(deliveryId, OUTBOX_SHARDS)),
    gsi7sk: `${relayAfter}#${deliveryId}`,
  }),
  /**
   * The outbox as it was before its shards: one gsi2 partition, read by the sweep (never written again) until the
   * deliveries written before the shards, which keep their keys there until they move or finish, are gone.
   */
  legacyOutbox: 'OUTBOX',
  /** The relay time (ISO 8601) and the delivery an outbox sort key was built from. */
  outboxEntry: (sortKey: string) => ({ relayAfter: sortKey.slice(0, sortKey.indexOf('#')), deliveryId: sortKey.slice(sortKey.indexOf('#') + 1) }),

  auditEvent: (eventId: string): TableKey => ({ pk: `AUDIT#${eventId}`, sk: 'AUDIT' }),
  /**
   * Before the sharded lists: the gsi1 partition of a partner's audit events and the gsi2 partition of all of them
   * (the lists still read them; audit events are never written again).
   */
  auditEventsOf: (partnerId: string) => `AUDIT#${partnerId}`,
  allAuditEvents: 'AUDIT',
  /** A shard of a partner's audit events (gsi5), and of every event (gsi6). */
  partnerAuditShard: (partnerId: string, shard: number) => `AUDIT#${partnerId}#${shardKey(shard)}`,
  platformAuditShard: (shard: number) => `AUDIT#${shardKey(shard)}`,
  /** An event's place in its partner's list (none for an event of no partner's) and in every event's. */
  auditEventIndex: (partnerId: string | undefined, eventId: string, createdAt: string): IndexKeys => ({
    ...(partnerId === undefined
      ? {}
      : { gsi5pk: keys.partnerAuditShard(partnerId, shardOf(eventId, AUDIT_LIST_SHARDS.partner)), gsi5sk: timeOrdered(createdAt, eventId) }),
    gsi6pk: keys.platformAuditShard(shardOf(eventId, AUDIT_LIST_SHARDS.platform)),
    gsi6sk: timeOrdered(createdAt, eventId),
  }),

  settlementBatch: (batchId: string): TableKey => ({ pk: `BATCH#${batchId}`, sk: 'BATCH' }),
  /**
   * A batch's contents beside it, in chunks (docs/settlement.md): `IDS#<n>` its transaction ids, `ADJ#<n>` its other
   * entries, `LINES#<n>` every line for the report. `ADJ#` < `BATCH` < `IDS#` < `LINES#`, so one Query from `ADJ#` to
   * `IDS#~` reads the batch with what its view shows, and not the lines.
   */
  batchChunk: (batchId: string, kind: 'ADJ' | 'IDS' | 'LINES', n: number): TableKey => ({ pk: `BATCH#${batchId}`, sk: `${kind}#${String(n).padStart(5, '0')}` }),
  /** gsi3 partition of the lines a building batch has reserved: out of the waiting index, not yet in a visible batch. */
  settlementBuildPartition: (batchId: string) => `BUILD#${batchId}`,
  /**
   * A building batch's status, copied once per reservation worker (`XBUILD#<n>`, outside its content chunks' range):
   * each worker's transactions check their own copy, since two transactions holding one item at once conflict.
   */
  settlementBuildCheck: (batchId: string, copy: number): TableKey => ({ pk: `BATCH#${batchId}`, sk: `XBUILD#${copy}` }),
  /** gsi1 partition of a partner's batches still building or discarded (not yet released): the next run finds them here. */
  settlementBuildsOf: (partnerId: string) => `BUILDS#${partnerId}`,
  /** The lease that lets one run at a time build a group's batches (partner, client, currency). */
  settlementGroup: (partnerId: string, clientId: string, currency: string): TableKey => ({ pk: `SETTLEGROUP#${partnerId}#${clientId}#${currency}`, sk: 'GROUP' }),
  /** gsi1 partition of a partner's batches; gsi2 partition of all batches. */
  /** A run scope's continuation waiting to run (at most one at a time): the scope as JSON, `[partner|null, client|null]`. */
  settlementContinuation: (scope: string): TableKey => ({ pk: `SETTLECONT#${scope}`, sk: 'PENDING' }),
  settlementBatchesOf: (partnerId: string) => `BATCHES#${partnerId}`,
  allSettlementBatches: 'BATCHES',
  settlementBuildIndex: (partnerId: string, batchId: string, createdAt: string): IndexKeys => ({
    gsi1pk: keys.settlementBuildsOf(partnerId),
    gsi1sk: timeOrdered(createdAt, batchId),
  }),
  settlementBatchIndex: (partnerId: string, batchId: string, createdAt: string): IndexKeys => ({
    gsi1pk: keys.settlementBatchesOf(partnerId),
    gsi1sk: timeOrdered(createdAt, batchId),
    gsi2pk: keys.allSettlementBatches,
    gsi2sk: timeOrdered(createdAt, batchId),
  }),
} as const;
