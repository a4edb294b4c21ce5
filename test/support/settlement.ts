/**
 * Settlement fixtures: transactions brought to a final status the way production does it (a pending transaction
 * with its intent, then the processor's signed event through the local API), and the sandbox rails' records.
 */
import type { RunContinuation, SettlementContinuations } from '../../lib/use-cases/ports/settlement-store';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../../lib/config';
import { newId } from '../../lib/domain/ids';
import { computeFees } from '../../lib/domain/fees';
import { currencyCode } from '../../lib/domain/money';
import { documentClient, tableName } from '../../lib/store/dynamo';
import { keys } from '../../lib/store/keys';
import { transactionItem } from '../../lib/store/transactions';
import { transactionFixture } from './transactions';
import type { Transaction } from '../../lib/domain/transaction';
import type { TestApi } from './api';
import { dispute, eventBody, intentObject, pendingTransaction, refundedCharge, signed } from './processor-events';

/** Yesterday at noon UTC: before today's day boundary, so a day-boundary run takes it. */
export const yesterday = () => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - 1, 12)).toISOString();

export async function postProcessorEvent(api: TestApi, body: string): Promise<void> {
  const response = await api.request('POST', '/webhooks/processor', {
    headers: { 'content-type': 'application/json', 'processor-signature': signed(body) },
    body,
  });
  if (response.status !== 200) throw new Error(`processor event refused: ${response.status} ${JSON.stringify(response.body)}`);
}

export type FinalStatus = 'succeeded' | 'failed' | 'pending';

/** A transaction of the client in `status`, created at `createdAt` (yesterday unless given), moved by a processor event. */
export async function transactionIn(
  api: TestApi,
  payee: { partnerId: string; clientId: string },
  money: { amountMinor: number; currency: string },
  options: { status?: FinalStatus; createdAt?: string } = {},
): Promise<Transaction> {
  const tx = await pendingTransaction(payee.partnerId, payee.clientId, money, null, options.createdAt ?? yesterday());
  const status = options.status ?? 'succeeded';
  if (status === 'pending') return tx;
  const type = status === 'succeeded' ? 'payment_intent.succeeded' : 'payment_intent.payment_failed';
  const intentStatus = status === 'succeeded' ? 'succeeded' : 'requires_payment_method';
  await postProcessorEvent(api, eventBody(type, intentObject(tx.processorPaymentIntentId ?? '', tx.amountMinor, tx.currency.toLowerCase(), intentStatus)));
  return tx;
}

/** Refunds a transaction fully, through the processor's `charge.refunded` event. */
export const refund = (api: TestApi, tx: Transaction) =>
  postProcessorEvent(api, eventBody('charge.refunded', refundedCharge(tx.processorPaymentIntentId ?? '', tx.amountMinor, tx.amountMinor, tx.currency.toLowerCase())));

/** Charges a transaction back, through the processor's `charge.dispute.created` event. */
export const chargeBack = (api: TestApi, tx: Transaction) =>
  postProcessorEvent(api, eventBody('charge.dispute.created', dispute(tx.processorPaymentIntentId ?? '', tx.amountMinor, tx.currency.toLowerCase())));

/** Runs `work` over `items`, `concurrency` at a time. */
export async function inParallel<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index] as T);
      }
    }),
  );
  return results;
}

export interface RailTransfer {
  transfer_id: string;
  batch_id: string;
  amount: number;
  currency: string;
  status: 'paid' | 'failed';
}

const railBase = (rail: 'a' | 'b') => (rail === 'a' ? config.RAIL_A_API_BASE : config.RAIL_B_API_BASE) ?? '';

/** Every payout attempt the sandbox rail recorded for one batch. */
export async function railTransfers(rail: 'a' | 'b', batchId: string): Promise<RailTransfer[]> {
  const response = await fetch(`${railBase(rail)}/transfers`);
  const body = (await response.json()) as { items: RailTransfer[] };
  return body.items.filter((item) => item.batch_id === batchId);
}

/** Makes the sandbox rail's next payout fail. */
export async function failNextPayout(rail: 'a' | 'b'): Promise<void> {
  const response = await fetch(`${railBase(rail)}/fail-next`, { method: 'POST' });
  if (!response.ok) throw new Error(`fail-next refused: ${response.status}`);
}

/** Where seeded items are written: a document client and its table (by default this process's, from `lib/config`). */
export interface SeedTarget {
  client: Pick<DynamoDBDocumentClient, 'send'>;
  tableName: string;
}

/**
 * `count` succeeded, unsettled payments of one merchant, written straight to the table in the exact shape the
 * service writes on success (the transaction, its fee split, its place in the settlement index), created one second
 * apart from `from` (yesterday's noon): for runs over thousands of payments, which the API would take minutes to make.
 * Returns their ids, oldest first.
 */
export async function seedWaitingPayments(
  payee: { partnerId: string; clientId: string },
  count: number,
  options: { currency?: string; from?: string; partnerReference?: (n: number) => string } = {},
): Promise<string[]> {
  return (await seedWaitingTransactions(payee, count, options)).map((tx) => tx.svcTxId);
}

/**
 * {@link seedWaitingPayments}, returning the transactions written (amounts and fee splits, to check totals against),
 * into `options.target` when given: another table, such as the one of a service started with `npm start`.
 */
export async function seedWaitingTransactions(
  payee: { partnerId: string; clientId: string },
  count: number,
  options: { currency?: string; from?: string; partnerReference?: (n: number) => string; target?: SeedTarget } = {},
): Promise<Transaction[]> {
  const target: SeedTarget = options.target ?? { client: documentClient, tableName };
  const currency = currencyCode(options.currency ?? 'EUR');
  const from = Date.parse(options.from ?? yesterday());
  const fees = { processorFeePercent: config.PROCESSOR_FEE_PERCENT, serviceFeePercent: 1, clientFeePercent: null, flatUsdCents: null };
  const transactions = Array.from({ length: count }, (_, i) => {
    const amountMinor = 1000 + (i % 500);
    return transactionFixture({
      // The service's own id format: seeded payments are listed beside real ones, checked against the documented contract.
      svcTxId: newId.svcTx(),
      partnerId: payee.partnerId,
      clientId: payee.clientId,
      createdAt: new Date(from + i * 1000).toISOString(),
      ...(options.partnerReference === undefined ? {} : { partnerReference: options.partnerReference(i) }),
      amountMinor,
      currency,
      status: 'succeeded',
      fees: computeFees(amountMinor, currency, fees),
    });
  });
  const items = transactions.map((tx) => ({ ...transactionItem(tx), ...keys.settlementIndex(tx.partnerId, tx.clientId, tx.currency, tx.createdAt, tx.svcTxId) }));
  await inParallel(
    Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => items.slice(i * 25, i * 25 + 25)),
    8,
    async (slice) => {
      let pending: Array<Record<string, unknown>> = slice.map((Item) => ({ PutRequest: { Item } }));
      while (pending.length > 0) {
        const { UnprocessedItems } = await target.client.send(new BatchWriteCommand({ RequestItems: { [target.tableName]: pending as never } }));
        pending = (UnprocessedItems?.[target.tableName] ?? []) as Array<Record<string, unknown>>;
      }
    },
  );
  return transactions;
}

/** A continuation queue that keeps what is sent to it in `sent` (every continuation is sent: none is ever pending). */
export const keepingContinuations = (sent: RunContinuation[]): SettlementContinuations => ({
  continueRun: async (next) => {
    sent.push(next);
    return 'sent';
  },
  started: async () => undefined,
});
