/**
 * The targets `npm run bench` checks its figures against, and the pass/fail table. A target
 * whose figure the run did not measure (a section not run) is left out, neither met nor missed.
 */

export type Figures = Record<string, unknown>;

interface Target {
  name: string;
  /** The figure as shown, and whether it meets the target; `undefined` when the run did not measure it. */
  check(figures: Figures): { shown: string; met: boolean } | undefined;
}

const numberOf = (figures: Figures, key: string): number | undefined => (typeof figures[key] === 'number' ? (figures[key] as number) : undefined);

/** A target on one figure: `figure <= limit` (or `>=`). */
const bound = (name: string, key: string, op: '<=' | '>=', limit: number, unit = ''): Target => ({
  name,
  check: (figures) => {
    const value = numberOf(figures, key);
    if (value === undefined) return undefined;
    return { shown: `${key} = ${value}${unit}`, met: op === '<=' ? value <= limit : value >= limit };
  },
});

export const TARGETS: Target[] = [
  bound('checkout: at most 4 DynamoDB calls', 'checkout_dynamodb_calls', '<=', 4),
  bound('checkout: at most 1 processor call', 'checkout_processor_calls', '<=', 1),
  bound('checkout throughput at least 60% of the DB bound', 'checkout_ratio_to_db_bound', '>=', 0.6),
  {
    name: 'checkout p99 at most 3x p50',
    check: (figures) => {
      const p50 = numberOf(figures, 'checkout_p50_ms');
      const p99 = numberOf(figures, 'checkout_p99_ms');
      if (p50 === undefined || p99 === undefined) return undefined;
      return { shown: `p99 ${p99} ms = ${Math.round((p99 / p50) * 100) / 100}x p50 ${p50} ms`, met: p99 <= 3 * p50 };
    },
  },
  bound('settlement: 10,000 transactions batched within 30 s', 'settlement_10k_s', '<=', 30, ' s'),
  bound('settlement: with 100,000 settled in the table at most 1.2x as long', 'settlement_history_ratio', '<=', 1.2),
  {
    name: 'settlement: one batch per group (partner, client, currency) at 10,000 eligible',
    check: (figures) => {
      const batches = numberOf(figures, 'settlement_batches');
      const groups = numberOf(figures, 'settlement_groups');
      if (batches === undefined || groups === undefined) return undefined;
      return { shown: `settlement_batches = ${batches}, settlement_groups = ${groups}`, met: batches === groups };
    },
  },
  bound('settlement: one merchant`s 100,000 settled (10 batches, continuations included) within 240 s', 'settlement_one_group_100k_s', '<=', 240, ' s'),
  bound('capacity: 10,000 payments/s before a partition reaches its limit', 'capacity_ceiling_payments_per_s', '>=', 10_000),
  bound('capacity: 3,000 payments/s from one partner', 'capacity_ceiling_one_partner_per_s', '>=', 3_000),
  bound('capacity: no key above half its partition limit at the model load', 'capacity_hottest_key_share', '<=', 0.5),
  bound('processor event -> partner webhook p95 at most 1 s', 'webhook_p95_ms', '<=', 1000, ' ms'),
  bound('the same beside a noisy neighbour: p95 at most 1 s', 'webhook_noisy_neighbor_p95_ms', '<=', 1000, ' ms'),
  {
    name: 'the same beside a noisy neighbour: p95 at most 2x the quiet p95',
    check: (figures) => {
      const quiet = numberOf(figures, 'webhook_p95_ms');
      const noisy = numberOf(figures, 'webhook_noisy_neighbor_p95_ms');
      if (quiet === undefined || noisy === undefined) return undefined;
      return { shown: `${noisy} ms = ${Math.round((noisy / quiet) * 100) / 100}x quiet ${quiet} ms`, met: noisy <= 2 * quiet };
    },
  },
];

export interface TargetRow {
  target: string;
  figure: string;
  result: 'met' | 'MISSED';
}

export function checkTargets(figures: Figures): TargetRow[] {
  return TARGETS.flatMap((target) => {
    const checked = target.check(figures);
    return checked === undefined ? [] : [{ target: target.name, figure: checked.shown, result: checked.met ? ('met' as const) : ('MISSED' as const) }];
  });
}
