/**
 * `npm run bench -- capacity`: the capacity model (docs/performance.md). Measures what each operation of a payment's
 * life consumes and touches on DynamoDB Local (`measure.ts`), projects it onto `load-model.json` (`model.ts`) and
 * prints, per partition key shape, the hottest key's units a second and share of a partition's limit; the
 * ceilings; units per payment; and the on-demand cost per million payments.
 */
import { readFileSync } from 'node:fs';
import { type LoadModel, PARTITION_LIMIT, project } from './model';
import { measureCapacity } from './measure';

const MODEL_FILE = new URL('./load-model.json', import.meta.url);

export async function benchCapacity(out: Console, progress: (line: string) => void): Promise<Record<string, unknown>> {
  const model = JSON.parse(readFileSync(MODEL_FILE, 'utf8')) as LoadModel;
  progress(`\nCapacity model: a payment's life measured on DynamoDB Local, projected onto bench/capacity/load-model.json`);
  const measured = await measureCapacity(progress);
  if (measured.unknownFunctions.length > 0) throw new Error(`capacity: calls of functions no step expects: ${measured.unknownFunctions.join(', ')}`);
  const projection = project(measured.operations, model);

  out.log(`\nCapacity units per run of each operation (measured over ${measured.payments} payments), and how often it runs`);
  out.table(projection.operations.map(({ name, cadence, write, read }) => ({ operation: name, runs: cadence, write_units: write, read_units: read })));
  out.log(
    `\nThe hottest key of each partition key shape at ${model.payments_per_second} payments/s (the biggest partner ${model.biggest_partner_payments_per_second}/s); ` +
      `limits per partition: ${PARTITION_LIMIT.write} write, ${PARTITION_LIMIT.read} read units/s`,
  );
  out.table(
    projection.loads.map((load) => ({
      on: load.on,
      key: load.shape,
      scope: load.scope,
      partitions: load.spread,
      access: load.access,
      units_per_s: load.unitsPerSecond,
      share_of_limit: load.share,
    })),
  );
  out.log('\nWhat puts the load on the keys above half their limit: units a second by operation');
  out.table(
    projection.loads
      .filter((load) => load.share > 0.5)
      .flatMap((load) =>
        Object.entries(load.byOperation)
          .filter(([, units]) => units > 0)
          .sort(([, a], [, b]) => b - a)
          .map(([operation, units]) => ({ key: `${load.on} ${load.shape} (${load.access})`, operation, units_per_s: units })),
      ),
  );
  const hottest = `${projection.hottest.on} ${projection.hottest.shape} (${projection.hottest.access})`;
  const figures = {
    capacity_ceiling_payments_per_s: projection.ceilingPaymentsPerSecond,
    capacity_ceiling_one_partner_per_s: projection.ceilingOnePartnerPerSecond,
    capacity_hottest_key: hottest,
    capacity_hottest_key_share: projection.hottest.share,
    capacity_write_units_per_payment: projection.writeUnitsPerPayment,
    capacity_read_units_per_payment: projection.readUnitsPerPayment,
    capacity_cost_per_million_payments_usd: projection.costPerMillionPayments,
  };
  out.table([figures]);
  return figures;
}
