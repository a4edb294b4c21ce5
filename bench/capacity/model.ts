/**
 * The capacity model's arithmetic: what was measured per operation (units on each partition of the table and its
 * indexes, `measure.ts`) projected onto a load (`load-model.json`): per partition key shape, the units a second its
 * hottest key takes and their share of a partition's limit, the ceilings, units per payment and the on-demand cost.
 * Pure: no I/O.
 *
 * Every load here is linear in the payment rate R, plus what does not follow payments (reads a minute, sweeps):
 * a shape's hottest key takes `fixed + perPayment × R`. A partner-scoped key takes the biggest partner's share of
 * R, an API key's its share of that, an item's only its own few operations whatever R is.
 */
import { type Scope, shapeOf } from './shapes';

/** DynamoDB's limits per partition, of the table or of an index (decisions.md §11). */
export const PARTITION_LIMIT = { write: 1_000, read: 3_000 } as const;

export interface LoadModel {
  payments_per_second: number;
  /** The biggest partner's payments a second (its keys are the hottest partner-scoped keys). */
  biggest_partner_payments_per_second: number;
  partners: number;
  /** The biggest merchant's share of its partner's payments. */
  biggest_client_share_of_partner: number;
  api_keys_per_partner: number;
  webhook_endpoints_per_partner: number;
  /** Shares of payments refunded (in one partial step) and disputed. */
  refund_share: number;
  dispute_share: number;
  /** The hours of a day over which the day's settlement and payouts run (24: at the rate payments come). */
  settlement_hours_per_day: number;
  /**
   * Payments a settlement batch holds on average (one batch per merchant and currency a day, up to 10,000): what a
   * batch's own writes (its record, its lease, its place in the batch lists) are spread over.
   */
  payments_per_batch: number;
  /** Reads of one transaction by `svc_tx_id` per payment (a frontend's reconcile). */
  transaction_reads_per_payment: number;
  /** List reads per partner per minute, by operation ({@link OPERATIONS}' `read: …`). */
  list_reads_per_partner_per_minute: Record<string, number>;
  outbox_sweeps_per_minute: number;
  /** On-demand request unit prices in US dollars per million (region and date in docs/performance.md). */
  price_per_million: { write: number; read: number };
}

/** How often an operation runs: per payment (a share of them), per partner per minute, or per minute. */
export type Cadence = { perPayment: number } | { perPartnerPerMinute: number } | { perMinute: number };

/** The operations `measure.ts` measures, by name. */
export const OPERATIONS = {
  checkout: 'checkout',
  succeeded: 'processor event: succeeded',
  succeededDeliveries: 'webhook deliveries: succeeded',
  refund: 'processor event: partial refund',
  refundDeliveries: 'webhook deliveries: partial refund',
  dispute: 'processor event: dispute',
  disputeDeliveries: 'webhook deliveries: dispute',
  settlementRun: 'settlement run (per payment settled)',
  payout: 'payout (per payment paid)',
  transactionRead: 'read: one transaction',
  transactionsPage: 'read: transactions page (50)',
  balances: 'read: balances',
  settlementsPage: 'read: settlements page',
  clientsPage: 'read: clients page',
  outboxSweep: 'outbox sweep',
} as const;

/** How often each operation runs under `model`. */
export function cadencesOf(model: LoadModel): Record<string, Cadence> {
  const settlement = { perPayment: 24 / model.settlement_hours_per_day };
  return {
    [OPERATIONS.checkout]: { perPayment: 1 },
    [OPERATIONS.succeeded]: { perPayment: 1 },
    [OPERATIONS.succeededDeliveries]: { perPayment: 1 },
    [OPERATIONS.refund]: { perPayment: model.refund_share },
    [OPERATIONS.refundDeliveries]: { perPayment: model.refund_share },
    [OPERATIONS.dispute]: { perPayment: model.dispute_share },
    [OPERATIONS.disputeDeliveries]: { perPayment: model.dispute_share },
    [OPERATIONS.settlementRun]: settlement,
    [OPERATIONS.payout]: settlement,
    [OPERATIONS.transactionRead]: { perPayment: model.transaction_reads_per_payment },
    ...Object.fromEntries(Object.entries(model.list_reads_per_partner_per_minute).map(([name, perPartnerPerMinute]) => [name, { perPartnerPerMinute }])),
    [OPERATIONS.outboxSweep]: { perMinute: model.outbox_sweeps_per_minute },
  };
}

/** One partition an operation touched, summed over the times it was measured. */
export interface MeasuredTouch {
  on: string;
  partition: string;
  access: 'read' | 'write';
  units: number;
}

export interface MeasuredOperation {
  name: string;
  /** How many times it ran while measured (the units below are their sum). */
  instances: number;
  /**
   * The settlement batches its instances made or paid: on a shape written once a batch (`perBatch` in `shapes.ts`),
   * its units are a batch's, spread over the model's `payments_per_batch` rather than the few measured.
   */
  batches?: number;
  touches: MeasuredTouch[];
}

export interface ShapeLoad {
  on: string;
  shape: string;
  scope: Scope;
  /** The partitions the scope's traffic is spread over (shards, times endpoints for a per-endpoint key). */
  spread: number;
  access: 'read' | 'write';
  /** Units a second on the hottest key at the model's load. */
  unitsPerSecond: number;
  /** unitsPerSecond / the partition's limit. */
  share: number;
  /** Units a second that follow the payment rate (per payment a second), and those that do not. */
  perPayment: number;
  fixed: number;
  /** The same, with one partner alone (its rate as the whole platform's). */
  perPaymentOnePartner: number;
  /** Units a second at the model's load by operation: what puts the load on this key. */
  byOperation: Record<string, number>;
}

export interface Projection {
  loads: ShapeLoad[];
  hottest: ShapeLoad;
  ceilingPaymentsPerSecond: number;
  ceilingOnePartnerPerSecond: number;
  writeUnitsPerPayment: number;
  readUnitsPerPayment: number;
  costPerMillionPayments: number;
  /** Units per operation (each time it runs), by access: what each step of a payment's life costs. */
  operations: Array<{ name: string; cadence: string; write: number; read: number }>;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** The partitions a per-endpoint key's traffic is spread over, beside its shards. */
const perEndpoint = (shape: string) => shape.includes('<endpoint>');

export function project(measured: MeasuredOperation[], model: LoadModel): Projection {
  const cadences = cadencesOf(model);
  const R = model.payments_per_second;
  const partnerShare = model.biggest_partner_payments_per_second / R;
  /** A scope's share of the platform's payment rate (item: not a rate; handled apart). */
  const scopeShare: Record<Scope, number> = {
    platform: 1,
    partner: partnerShare,
    apiKey: partnerShare / model.api_keys_per_partner,
    client: partnerShare * model.biggest_client_share_of_partner,
    item: 0,
  };
  const loads = new Map<string, ShapeLoad>();
  const operations: Projection['operations'] = [];
  let writePerPayment = 0;
  let readPerPayment = 0;

  for (const operation of measured) {
    const cadence = cadences[operation.name];
    if (cadence === undefined) throw new Error(`No cadence for operation "${operation.name}"`);
    const perRun = { write: 0, read: 0 };
    // Units per run on each shape, and on each item (an item's key: only its own runs).
    const byShape = new Map<string, { shape: ReturnType<typeof shapeOf>; access: 'read' | 'write'; units: number; partitions: Set<string> }>();
    for (const touch of operation.touches) {
      const shape = shapeOf(touch.on, touch.partition);
      const id = `${shape.on} ${shape.shape} ${touch.access}`;
      const entry = byShape.get(id) ?? { shape, access: touch.access, units: 0, partitions: new Set<string>() };
      // A batch's own writes per payment: a batch's units over the payments a batch holds under the model.
      const perInstance = shape.perBatch === true && operation.batches !== undefined ? touch.units / operation.batches / model.payments_per_batch : touch.units / operation.instances;
      entry.units += perInstance;
      entry.partitions.add(touch.partition);
      byShape.set(id, entry);
      perRun[touch.access] += perInstance;
    }
    operations.push({ name: operation.name, cadence: describe(cadence), write: round(perRun.write), read: round(perRun.read) });
    const runsPerPayment = 'perPayment' in cadence ? cadence.perPayment : 0;
    const fixedRunsPerSecond = 'perPartnerPerMinute' in cadence ? (cadence.perPartnerPerMinute * model.partners) / 60 : 'perMinute' in cadence ? cadence.perMinute / 60 : 0;
    writePerPayment += perRun.write * runsPerPayment + (perRun.write * fixedRunsPerSecond) / R;
    readPerPayment += perRun.read * runsPerPayment + (perRun.read * fixedRunsPerSecond) / R;

    for (const [id, { shape, access, units, partitions }] of byShape) {
      const spread = shape.shards * (perEndpoint(shape.shape) ? model.webhook_endpoints_per_partner : 1);
      const load = loads.get(id) ?? { on: shape.on, shape: shape.shape, scope: shape.scope, spread, access, unitsPerSecond: 0, share: 0, perPayment: 0, fixed: 0, perPaymentOnePartner: 0, byOperation: {} };
      const before = load.fixed + load.perPayment * R;
      if (shape.scope === 'item') {
        // One item takes its own runs only, whatever the load: counted as one run a second of the costliest.
        load.fixed = Math.max(load.fixed, units / Math.max(1, partitions.size / operation.instances));
      } else if ('perPayment' in cadence) {
        load.perPayment += (cadence.perPayment * units * scopeShare[shape.scope]) / spread;
        load.perPaymentOnePartner += (cadence.perPayment * units * (shape.scope === 'apiKey' ? 1 / model.api_keys_per_partner : shape.scope === 'client' ? model.biggest_client_share_of_partner : 1)) / spread;
      } else {
        // A platform-wide key takes every partner's reads; a partner's key one partner's.
        const runsPerSecond = 'perPartnerPerMinute' in cadence ? (cadence.perPartnerPerMinute * (shape.scope === 'platform' ? model.partners : 1)) / 60 : cadence.perMinute / 60;
        load.fixed += (runsPerSecond * units) / spread;
      }
      load.byOperation[operation.name] = round((load.byOperation[operation.name] ?? 0) + load.fixed + load.perPayment * R - before);
      loads.set(id, load);
    }
  }

  const all = [...loads.values()].map((load) => {
    const unitsPerSecond = load.fixed + load.perPayment * R;
    return { ...load, unitsPerSecond: round(unitsPerSecond), share: round(unitsPerSecond / PARTITION_LIMIT[load.access], 3) };
  });
  all.sort((a, b) => b.share - a.share);
  const ceiling = (slope: (load: ShapeLoad) => number) =>
    Math.floor(Math.min(...all.filter((load) => slope(load) > 0).map((load) => (PARTITION_LIMIT[load.access] - load.fixed) / slope(load))));
  const costPerMillion = writePerPayment * model.price_per_million.write + readPerPayment * model.price_per_million.read;
  return {
    loads: all,
    hottest: all[0]!,
    ceilingPaymentsPerSecond: ceiling((load) => load.perPayment),
    ceilingOnePartnerPerSecond: ceiling((load) => load.perPaymentOnePartner),
    writeUnitsPerPayment: round(writePerPayment),
    readUnitsPerPayment: round(readPerPayment),
    costPerMillionPayments: round(costPerMillion),
    operations,
  };
}

function describe(cadence: Cadence): string {
  if ('perPayment' in cadence) return cadence.perPayment === 1 ? 'each payment' : `${cadence.perPayment} per payment`;
  if ('perPartnerPerMinute' in cadence) return `${cadence.perPartnerPerMinute} a minute per partner`;
  return `${cadence.perMinute} a minute`;
}
