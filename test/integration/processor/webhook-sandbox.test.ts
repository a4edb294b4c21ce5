/**
 * The lifecycle end to end with the real sandbox processor: a checkout created over HTTP, the payment confirmed
 * with the stripe SDK against the sandbox, and the sandbox's own signed events reaching
 * `/api/v1/webhooks/processor` of the local API, which moves the transaction and computes its fees.
 * This file runs the service against a sandbox of its own, whose events go to this file's API.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { PartnerCredentials } from '../../support/api';
import { useSandboxProcessor } from '../../support/delivery-world';

const { apiPort, sandbox, stripe } = await useSandboxProcessor('lifecycle_suite');
const { TestApi } = await import('../../support/api');
const { waitFor } = await import('../../support/processor-sandbox');

let api: Awaited<ReturnType<typeof TestApi.start>>;
let partner: PartnerCredentials;
let clientId: string;
beforeAll(async () => {
  api = await TestApi.start({ port: apiPort });
  partner = await api.createPartner({ service_fee_percentage: 1.5 });
  clientId = await api.createClient(partner, { partner_fee_percentage: 3, partner_fee_flat_usd: 0.3 });
});
afterAll(async () => {
  await sandbox.close();
  await api.close();
});

async function checkout(amount: number, currency: string) {
  const response = await api.signed(partner, '/transactions/checkout-intent', {
    partner_id: partner.partnerId,
    client_id: clientId,
    amount,
    currency,
    email: 'buyer@example.com',
    partner_reference: `order-${randomUUID()}`,
  });
  if (response.status !== 201) throw new Error(`checkout failed: ${JSON.stringify(response.body)}`);
  return response.body as { svc_tx_id: string; processor_payment_intent_id: string };
}

/** Polls the read endpoint until the transaction reaches `status` (events arrive after the SDK's answer). */
async function transactionIn(svcTxId: string, status: string): Promise<any> {
  const deadline = Date.now() + 8_000;
  for (;;) {
    const { body } = await api.read(partner, `/transactions/${svcTxId}`);
    if (body?.status === status) return body;
    if (Date.now() > deadline) throw new Error(`${svcTxId} is ${JSON.stringify(body?.status)}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The sandbox's delivery of `type` for `objectId`, once it has an answer. */
const deliveryOf = (type: string, intentId: string) =>
  waitFor(`${type} for ${intentId} delivered`, () =>
    sandbox.events().find((event) => {
      const object = event.event.data.object as { id: string; payment_intent?: string };
      return event.event.type === type && (object.id === intentId || object.payment_intent === intentId) && event.attempts.length > 0;
    }),
  );

describe('the processor sandbox drives the transaction lifecycle over the real webhook route', () => {
  it('confirming with pm_card_visa makes the transaction succeeded with its fees, from the sandbox`s own signed event', async () => {
    // Arrange
    const { svc_tx_id: svcTxId, processor_payment_intent_id: intentId } = await checkout(49.99, 'usd');

    // Act
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });

    // Assert: the transaction, fees summing exactly to the amount
    const transaction = await transactionIn(svcTxId, 'succeeded');
    expect(transaction).toMatchObject({ amount: 49.99, currency: 'USD', processorFee: 1.45, platformFee: 1.8, svcEarningAmount: 0.75, netAmount: 46.74, processorFeePercent: 2.9 });
    expect(Math.round(transaction.processorFee * 100) + Math.round(transaction.platformFee * 100) + Math.round(transaction.netAmount * 100)).toBe(4999);
    // Assert: the sandbox saw its events accepted: the mapped one moved the transaction, charge.succeeded ignored
    const succeeded = await deliveryOf('payment_intent.succeeded', intentId);
    expect(succeeded.outcome).toBe('delivered');
    expect(JSON.parse(succeeded.attempts[0]?.responseBody ?? '')).toEqual({ received: true, svc_tx_id: svcTxId, status: 'succeeded' });
    const charge = await deliveryOf('charge.succeeded', intentId);
    expect(JSON.parse(charge.attempts[0]?.responseBody ?? '')).toEqual({ message: 'Ignored event type charge.succeeded' });

    // Act: then a full refund at the sandbox
    await stripe.refunds.create({ payment_intent: intentId });

    // Assert
    await transactionIn(svcTxId, 'refunded');
  });

  it('a declined card makes it failed, and a retry with pm_card_visa makes it succeeded', async () => {
    // Arrange
    const { svc_tx_id: svcTxId, processor_payment_intent_id: intentId } = await checkout(12.5, 'eur');

    // Act: declined
    await expect(stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_chargeDeclined' })).rejects.toThrow();
    await transactionIn(svcTxId, 'failed');
    // Act: retried
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });

    // Assert: no flat fee on EUR; processor 2.9 % of 1250 = 36.25 -> 36, client fee 3 % = 37.5 -> 38
    expect(await transactionIn(svcTxId, 'succeeded')).toMatchObject({ processorFee: 0.36, platformFee: 0.38, netAmount: 11.76 });
  });
});
