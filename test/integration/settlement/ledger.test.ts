/**
 * The ledger through the running service (decisions.md §5a): the sandbox processor's real refunds and disputes
 * (Stripe-shaped events, signed, sent to this file's HTTP API), settlement runs, payouts over the sandbox rails,
 * the reconciliation report and `GET /balances`. Every amount is asserted in minor units against arithmetic
 * written out here.
 *
 * Each bullet of the outside review that found the gaps is reproduced, and fails on the code before the ledger:
 * a partial refund paid in full; a refund arriving before the success dropped; a dispute's amount, fee and
 * outcome ignored; a merchant that owes paid anyway.
 *
 * `SETTLEMENT_CUTOFF=now`: today's payments settle (set before the service's configuration loads).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { PartnerCredentials, TestApi } from '../../support/api';
import { useSandboxProcessor } from '../../support/delivery-world';

// Before anything loads the service's configuration (lib/config.ts): hence the dynamic imports below.
process.env.SETTLEMENT_CUTOFF = 'now';
const world = await useSandboxProcessor('ledger');
const { stripe, sandbox } = world;
const { TestApi: Api } = await import('../../support/api');
const { dispute: disputeObject, eventBody, intentObject, refundedCharge } = await import('../../support/processor-events');
const { postProcessorEvent, railTransfers } = await import('../../support/settlement');

let api: TestApi;
beforeAll(async () => {
  api = await Api.start({ port: world.apiPort });
});
afterAll(async () => {
  await api.close();
  await sandbox.close();
});

const TIMEOUT_MS = 60_000;

// ---------------------------------------------------------------------------------------------------------
// Helpers: a merchant, its payments at the sandbox processor, and what the service shows.

interface Merchant {
  partner: PartnerCredentials;
  clientId: string;
}

async function merchant(): Promise<Merchant> {
  const partner = await api.createPartner(); // service fee 1.5 %; the processor's 2.9 %
  return { partner, clientId: await api.createClient(partner) };
}

/** Waits until the sandbox has delivered every event it emitted (each answered by the service). */
async function eventsDelivered(): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (sandbox.events().some((event) => event.outcome === 'pending')) {
    if (Date.now() > deadline) throw new Error('the sandbox still has undelivered events');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const failed = sandbox.events().filter((event) => event.outcome !== 'delivered');
  if (failed.length > 0) throw new Error(`events the service refused: ${JSON.stringify(failed.map((event) => [event.event.type, event.attempts.at(-1)]))}`);
}

/** A checkout of `amountMinor` (USD cents unless told) with the partner's key: a pending payment and its intent at the processor. */
async function checkout(m: Merchant, amountMinor: number, currency = 'USD'): Promise<{ svcTxId: string; intentId: string }> {
  const response = await api.signed(m.partner, '/transactions/checkout-intent', {
    partner_id: m.partner.partnerId,
    client_id: m.clientId,
    amount: amountMinor / 100,
    currency,
    email: 'buyer@example.com',
    partner_reference: `order-${randomUUID()}`,
  });
  if (response.status !== 201) throw new Error(`checkout: ${JSON.stringify(response.body)}`);
  return { svcTxId: response.body.svc_tx_id as string, intentId: response.body.processor_payment_intent_id as string };
}

/** A paid payment: a checkout, then `pm_card_visa` at the processor, and its events delivered. */
async function payment(m: Merchant, amountMinor: number, currency = 'USD'): Promise<{ svcTxId: string; intentId: string }> {
  const pending = await checkout(m, amountMinor, currency);
  await stripe.paymentIntents.confirm(pending.intentId, { payment_method: 'pm_card_visa' });
  await eventsDelivered();
  return pending;
}

async function refund(intentId: string, amountMinor?: number): Promise<void> {
  await stripe.refunds.create({ payment_intent: intentId, ...(amountMinor === undefined ? {} : { amount: amountMinor }) });
  await eventsDelivered();
}

/** The sandbox's dispute trigger (as Stripe's test card would): the cardholder disputes `amount` with the processor's `fee`. */
async function dispute(intentId: string, amountMinor: number, feeMinor: number): Promise<string> {
  const response = await sandboxPost(`/sandbox/payment_intents/${intentId}/dispute`, { amount: String(amountMinor), fee: String(feeMinor) });
  await eventsDelivered();
  return response.id as string;
}

async function closeDispute(disputeId: string, status: 'won' | 'lost'): Promise<void> {
  await sandboxPost(`/sandbox/disputes/${disputeId}/close`, { status });
  await eventsDelivered();
}

async function sandboxPost(path: string, form: Record<string, string>): Promise<Record<string, unknown>> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${process.env.PROCESSOR_SECRET_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  const body = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`sandbox ${path}: ${JSON.stringify(body)}`);
  return body;
}

const transaction = async (m: Merchant, svcTxId: string) => (await api.read(m.partner, `/transactions/${svcTxId}`)).body;

async function run(m: Merchant) {
  const response = await api.request('POST', '/settlements/run', { headers: { 'x-api-key': m.partner.apiKey } });
  expect(response.status).toBe(200);
  return response.body as { created_batches: number; batches: Batch[] };
}

interface Batch {
  id: string;
  createdAt: string;
  clientId: string;
  currency: string;
  transactionIds: string[];
  adjustments: { svcTxId: string; type: string; gross: number; net: number }[];
  totalGross: number;
  totalProcessorFees: number;
  totalPlatformFees: number;
  totalNet: number;
  status: string;
}

async function pay(m: Merchant, batchId: string): Promise<Batch> {
  const response = await api.request('POST', '/settlements/pay', {
    headers: { 'x-api-key': m.partner.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ settlement_batch_id: batchId }),
  });
  expect(response.status).toBe(200);
  return response.body as Batch;
}

async function report(m: Merchant, batchId: string): Promise<string[][]> {
  const response = await api.read(m.partner, `/settlements/${batchId}/report.csv`);
  expect(response.status).toBe(200);
  return (response.body as string).trimEnd().split('\r\n').map((line) => line.split(','));
}

async function balances(m: Merchant) {
  const response = await api.read(m.partner, `/balances?client_id=${encodeURIComponent(m.clientId)}`);
  expect(response.status).toBe(200);
  return response.body.items as {
    client_id: string;
    currency: string;
    unsettled_net: number;
    waiting_reversals: number;
    owed: number;
    next_payout_estimate: number;
    owing_since: string | null;
  }[];
}

const cents = (major: number) => Math.round(major * 100);

/** What the rail paid for one batch, in cents (every paid attempt). */
async function railPaid(batchId: string): Promise<number> {
  const transfers = await railTransfers('a', batchId);
  return transfers.filter((transfer) => transfer.status === 'paid').reduce((sum, transfer) => sum + cents(transfer.amount), 0);
}

// ---------------------------------------------------------------------------------------------------------

describe('the ledger through the service (decisions.md §5a)', () => {
  it(
    'a 100.00 USD payment refunded 40.00 pays the merchant 57.36, not 95.60: the refund is an entry of its own',
    async () => {
      // Arrange: 100.00 USD: processor fee 2.90, platform fee 1.50 (1.5 %), net 95.60
      const m = await merchant();
      const paid = await payment(m, 10_000);

      // Act
      await refund(paid.intentId, 4_000);
      const before = await balances(m);
      const { batches } = await run(m);

      // Assert: 40 % of each term reversed: gross 40.00, processor fee 1.16, platform fee 0.60, net 38.24
      expect(await transaction(m, paid.svcTxId)).toMatchObject({ status: 'succeeded', refundedAmount: 40, disputedAmount: 0, disputeStatus: null });
      expect(before).toEqual([{ client_id: m.clientId, currency: 'USD', unsettled_net: 95.6, waiting_reversals: 38.24, owed: 0, next_payout_estimate: 57.36, owing_since: null }]);
      expect(batches).toHaveLength(1);
      expect(batches[0]).toMatchObject({ transactionIds: [paid.svcTxId], totalGross: 60, totalProcessorFees: 1.74, totalPlatformFees: 0.9, totalNet: 57.36 });
      expect(batches[0]!.adjustments).toEqual([expect.objectContaining({ svcTxId: paid.svcTxId, type: 'refund', gross: -40, net: -38.24 })]);
      const rows = await report(m, batches[0]!.id);
      expect(rows.map((row) => [row[0], ...row.slice(5)])).toEqual([
        ['type', 'gross', 'processor_fee', 'platform_fee', 'net'],
        ['transaction', '100.00', '2.90', '1.50', '95.60'],
        ['refund', '-40.00', '-1.16', '-0.60', '-38.24'],
        ['total', '60.00', '1.74', '0.90', '57.36'],
      ]);
      await pay(m, batches[0]!.id);
      expect(await railPaid(batches[0]!.id)).toBe(5_736);
      expect(await balances(m)).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    'partial refunds then the rest: each step an entry, the whole payment reversed exactly, status refunded, nothing paid',
    async () => {
      const m = await merchant();
      const paid = await payment(m, 999);
      for (const step of [333, 333, 333]) await refund(paid.intentId, step);
      expect(await transaction(m, paid.svcTxId)).toMatchObject({ status: 'refunded', refundedAmount: 9.99 });
      // Sale and reversals net to zero: no batch, and nothing owed.
      expect(await balances(m)).toEqual([{ client_id: m.clientId, currency: 'USD', unsettled_net: 9.55, waiting_reversals: 9.55, owed: 0, next_payout_estimate: 0, owing_since: null }]);
      expect((await run(m)).created_batches).toBe(0);
    },
    TIMEOUT_MS,
  );

  it(
    'a refund and a dispute that arrive before the payment`s success are recorded, and take effect with the success',
    async () => {
      // Arrange: a pending payment at the processor, and its events delivered out of order by hand
      const m = await merchant();
      const { svcTxId, intentId } = await checkout(m, 10_000);

      // Act: the refund first (answered 200, nothing moves), then the success
      await postProcessorEvent(api, eventBody('charge.refunded', refundedCharge(intentId, 10_000, 2_500, 'usd')));
      const early = await transaction(m, svcTxId);
      await postProcessorEvent(api, eventBody('payment_intent.succeeded', intentObject(intentId, 10_000, 'usd')));

      // Assert
      expect(early).toMatchObject({ status: 'pending', refundedAmount: 25, netAmount: null });
      expect(await transaction(m, svcTxId)).toMatchObject({ status: 'succeeded', refundedAmount: 25, netAmount: 95.6 });
      // 95.60 − (25.00 − 0.73 − 0.38) = 71.71
      expect(await balances(m)).toEqual([expect.objectContaining({ unsettled_net: 95.6, waiting_reversals: 23.89, next_payout_estimate: 71.71 })]);

      // And a dispute before the success moves the payment to chargeback with the success itself.
      const other = await checkout(m, 1_000);
      const otherIntent = other.intentId;
      await postProcessorEvent(api, eventBody('charge.dispute.created', disputeObject(otherIntent, 1_000, 'usd')));
      expect(await transaction(m, other.svcTxId)).toMatchObject({ status: 'pending', disputedAmount: 10, disputeStatus: 'needs_response' });
      await postProcessorEvent(api, eventBody('payment_intent.succeeded', intentObject(otherIntent, 1_000, 'usd')));
      expect(await transaction(m, other.svcTxId)).toMatchObject({ status: 'chargeback', disputedAmount: 10 });
    },
    TIMEOUT_MS,
  );

  it(
    'a partial dispute reverses its amount and charges its fee; won, the amount comes back, the fee stays; lost, nothing more',
    async () => {
      const m = await merchant();
      const won = await payment(m, 10_000);
      const lost = await payment(m, 10_000);

      // Act: 30.00 disputed on each, with the processor's 15.00 fee
      const wonDispute = await dispute(won.intentId, 3_000, 1_500);
      const lostDispute = await dispute(lost.intentId, 3_000, 1_500);
      const open = await balances(m);
      await closeDispute(wonDispute, 'won');
      await closeDispute(lostDispute, 'lost');

      // Assert: the dispute reverses the top 30 % of each term: gross 30.00, processor fee 0.87, platform fee 0.45, net 28.68
      expect(await transaction(m, won.svcTxId)).toMatchObject({ status: 'chargeback', disputedAmount: 30, disputeStatus: 'won' });
      expect(await transaction(m, lost.svcTxId)).toMatchObject({ status: 'chargeback', disputedAmount: 30, disputeStatus: 'lost' });
      // Open: 2 × 95.60 in; 2 × (28.68 + 15.00) out
      expect(open).toEqual([expect.objectContaining({ unsettled_net: 191.2, waiting_reversals: 87.36, next_payout_estimate: 103.84 })]);
      const { batches } = await run(m);
      expect(batches).toHaveLength(1);
      // Won: 95.60 − 28.68 − 15.00 + 28.68 = 80.60; lost: 95.60 − 28.68 − 15.00 = 51.92
      expect(batches[0]!.totalNet).toBe(132.52);
      // Charged back before settlement: in no batch's transactionIds, settled as entries beside their reversals
      expect(batches[0]!.transactionIds).toEqual([]);
      expect(batches[0]!.adjustments.map((line) => line.type).sort()).toEqual([
        'chargeback', 'chargeback', 'dispute_fee', 'dispute_fee', 'dispute_reinstated', 'transaction', 'transaction',
      ]);
      const rows = await report(m, batches[0]!.id);
      expect(rows.filter((row) => row[0] === 'dispute_fee').map((row) => row.slice(5))).toEqual([
        ['0.00', '15.00', '0.00', '-15.00'],
        ['0.00', '15.00', '0.00', '-15.00'],
      ]);
      await pay(m, batches[0]!.id);
      expect(await railPaid(batches[0]!.id)).toBe(13_252);
    },
    TIMEOUT_MS,
  );

  it(
    'a merchant that owes money is not paid until its sales cover it, and GET /balances shows the shortfall',
    async () => {
      // Arrange: a paid-out payment, then its full refund and a dispute of another paid-out payment
      const m = await merchant();
      const first = await payment(m, 10_000);
      const second = await payment(m, 5_000);
      const firstRun = await run(m);
      const paidAt = (await pay(m, firstRun.batches[0]!.id)).createdAt;
      await refund(first.intentId);
      await dispute(second.intentId, 5_000, 1_500);

      // Act: a small sale does not cover what is owed
      const small = await payment(m, 2_000);
      const owing = await balances(m);
      const owingRun = await run(m);

      // Assert: owed = 95.60 + 47.80 + 15.00 − 19.12 = 139.28
      expect(owing).toEqual([
        { client_id: m.clientId, currency: 'USD', unsettled_net: 19.12, waiting_reversals: 158.4, owed: 139.28, next_payout_estimate: 0, owing_since: expect.any(String) },
      ]);
      // Since the first reversal (the refund), which came after the payout
      expect(Date.parse(owing[0]!.owing_since as string)).toBeGreaterThan(Date.parse(paidAt));
      expect(owingRun.created_batches).toBe(0);
      expect((await transaction(m, small.svcTxId)).settlementStatus).toBe('unsettled');
      const admin = await api.admin('GET', `/admin/partners/${m.partner.partnerId}/balances?owing=true`);
      expect(admin.body.items).toEqual(owing);

      // Act: a sale that covers it
      await payment(m, 20_000);
      const estimate = await balances(m);
      const coveredRun = await run(m);

      // Assert: 191.20 − 139.28 = 51.92, paid in one batch whose report, totals and rail agree
      expect(estimate[0]!.next_payout_estimate).toBe(51.92);
      expect(coveredRun.batches).toHaveLength(1);
      const batch = coveredRun.batches[0]!;
      expect(batch.totalNet).toBe(51.92);
      const rows = await report(m, batch.id);
      const body = rows.slice(1, -1);
      const total = rows.at(-1)!;
      for (const [column, field] of [[5, 'totalGross'], [6, 'totalProcessorFees'], [7, 'totalPlatformFees'], [8, 'totalNet']] as const) {
        expect(body.reduce((sum, row) => sum + cents(Number(row[column])), 0)).toBe(cents(batch[field]));
        expect(cents(Number(total[column]))).toBe(cents(batch[field]));
      }
      await pay(m, batch.id);
      expect(await railPaid(batch.id)).toBe(5_192);
      expect(await balances(m)).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    'holds a batch made before a dispute that leaves its merchant owing (409 CLIENT_OWES, nothing paid), and pays it once sales cover the debt',
    async () => {
      // Arrange: a batch of one 100.00 payment, not paid yet; then that payment is disputed whole, with a 15.00 fee
      const m = await merchant();
      const paid = await payment(m, 10_000);
      const { batches } = await run(m);
      await dispute(paid.intentId, 10_000, 1_500);

      // Act
      const held = await api.request('POST', '/settlements/pay', {
        headers: { 'x-api-key': m.partner.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ settlement_batch_id: batches[0]!.id }),
      });

      // Assert: the merchant owes 95.60 + 15.00 (the batch's 95.60 is not counted: it is not paid)
      expect(held.status).toBe(409);
      expect(held.body.code).toBe('CLIENT_OWES');
      expect(await railTransfers('a', batches[0]!.id)).toEqual([]);
      expect((await balances(m))[0]).toMatchObject({ owed: 110.6 });

      // A 200.00 sale (net 191.20) covers it: the held batch is paid, once
      await payment(m, 20_000);
      expect((await pay(m, batches[0]!.id)).status).toBe('sent');
      expect(await railPaid(batches[0]!.id)).toBe(9_560);
    },
    TIMEOUT_MS,
  );

  it(
    'one transaction`s events delivered all at once, twice each, write each entry once',
    async () => {
      // Arrange: a pending payment and the Stripe events of its whole life
      const m = await merchant();
      const pending = await checkout(m, 10_000);
      const intentId = pending.intentId;
      const chargeId = `ch_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
      const refundsList = (amounts: number[]) => ({
        object: 'list',
        data: amounts.map((amount, i) => ({ id: `re_${chargeId}_${i}`, object: 'refund', amount, status: 'succeeded' })).reverse(),
        has_more: false,
      });
      const charge = (amounts: number[]) => ({
        ...refundedCharge(intentId, 10_000, amounts.reduce((a, b) => a + b, 0), 'usd'),
        id: chargeId,
        refunds: refundsList(amounts),
      });
      const bodies = [
        eventBody('payment_intent.succeeded', intentObject(intentId, 10_000, 'usd')),
        eventBody('charge.refunded', charge([1_000])),
        eventBody('charge.refunded', charge([1_000, 2_000])),
        eventBody('charge.refunded', charge([1_000, 2_000, 500])),
      ];

      // Act: every event twice, all at once
      const answers = await Promise.all([...bodies, ...bodies].map((body) => postProcessorEvent(api, body).then(() => 'ok', (error: Error) => error.message)));

      // Assert: 35.00 refunded in three entries: 10.00, 20.00, 5.00 of a 100.00 payment (fees 2.90 and 1.50)
      expect(answers.every((answer) => answer === 'ok')).toBe(true);
      expect(await transaction(m, pending.svcTxId)).toMatchObject({ status: 'succeeded', refundedAmount: 35 });
      // Cumulative 10.00 → net 9.56; 30.00 → 28.68 (step 19.12); 35.00 → 35.00 − 1.02 − 0.53 = 33.45 (step 4.77)
      expect(await balances(m)).toEqual([expect.objectContaining({ unsettled_net: 95.6, waiting_reversals: 33.45, next_payout_estimate: 62.15 })]);
      const { batches } = await run(m);
      expect(batches[0]!.adjustments.map((line) => line.net)).toEqual([-9.56, -19.12, -4.77]);
    },
    TIMEOUT_MS,
  );
});
