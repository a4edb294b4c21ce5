/**
 * The example partner backend's copies of the service's definitions (examples/partner-backend), held to the
 * originals so drift fails here: its status order (isLaterStatus) against the domain's moves, and its response
 * and webhook types against the service's response schemas, at compile time and on real answers.
 *
 * The world is a delivery world of this file's own (test/support/delivery-world.ts): a sandbox processor whose
 * signed events go to this file's HTTP API, against a table of this file's own.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type * as z from 'zod';
import { isLaterStatus } from '../../../examples/partner-backend/src/attempts';
import type * as example from '../../../examples/partner-backend/src/service-client';
import type { PaymentWebhook } from '../../../examples/partner-backend/src/webhooks';
import { canMove, TRANSACTION_STATUSES, type TransactionStatus } from '../../../lib/domain/transaction';
import * as schemas from '../../../lib/http/response-schemas';
import type { TestApi as TestApiType } from '../../support/api';
import { useDeliveryWorld } from '../../support/delivery-world';
import { checkoutRequest, serviceClientFor } from '../../support/example-backend';

const world = await useDeliveryWorld('example-copies');

let api: TestApiType;
beforeAll(() => {
  api = world.api();
});
const clientFor = serviceClientFor(world);

// ---------------------------------------------------------------------------------------------------------

/** True only when A and B are the same type, not merely assignable one to the other. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

describe("the example's copies of the service's definitions", () => {
  it("isLaterStatus is exactly what the service's own moves reach (lib/domain/transaction.ts), plus attaching an intent (initialized → pending)", () => {
    // Arrange: the domain's moves, and the one it leaves to attach-intent (lib/use-cases/transactions.ts)
    const moves = (from: TransactionStatus) => [...TRANSACTION_STATUSES.filter((to) => canMove(from, to)), ...(from === 'initialized' ? ['pending' as const] : [])];
    const reachable = (from: TransactionStatus) => {
      const seen = new Set<TransactionStatus>();
      for (let frontier = moves(from); frontier.length > 0; frontier = frontier.flatMap(moves).filter((status) => !seen.has(status))) {
        for (const status of frontier) seen.add(status);
      }
      return TRANSACTION_STATUSES.filter((to) => seen.has(to));
    };

    // Act
    const example = Object.fromEntries(TRANSACTION_STATUSES.map((from) => [from, TRANSACTION_STATUSES.filter((to) => isLaterStatus(from, to))]));
    const service = Object.fromEntries(TRANSACTION_STATUSES.map((from) => [from, reachable(from)]));

    // Assert
    expect(example).toEqual(service);
  });

  it("the example's response and webhook types are the service's response schemas: tsc fails on drift, and real answers parse with them", async () => {
    // Arrange: compile-time, each pair must be the same type (npm test typechecks before it runs jest)
    const TransactionPage = schemas.pageOf(schemas.Transaction, 'TransactionPage');
    const sameTypes: [
      Same<example.TransactionStatus, TransactionStatus>,
      Same<example.Transaction, z.output<typeof schemas.Transaction>>,
      Same<example.Page<example.Transaction>, z.output<typeof TransactionPage>>,
      Same<example.CheckoutIntent, z.output<typeof schemas.CheckoutIntent>>,
      Same<example.InitializedTransaction, z.output<typeof schemas.InitializedTransaction>>,
      Same<example.AttachedIntent, z.output<typeof schemas.AttachedIntent>>,
      Same<example.Client, z.output<typeof schemas.CreatedClient>>,
      Same<example.ValidationDetails, z.output<typeof schemas.ValidationErrorBody>['details']>,
      Same<PaymentWebhook, z.output<typeof schemas.PartnerWebhookBody>>,
    ] = [true, true, true, true, true, true, true, true, true];
    const partner = await api.createPartner();
    const client = clientFor(partner);
    const merchant = await client.createClient({ client_id: `merchant-${randomUUID().slice(0, 12)}`, legal_name: 'Merchant Four Ltd' });

    // Act: real answers, as the example's client returns them
    const intent = await client.checkoutIntent(checkoutRequest(partner, merchant.client_id));
    const transaction = await client.getTransaction(intent.svc_tx_id);
    const page = await client.listTransactions({ client_id: merchant.client_id });

    // Assert
    expect(sameTypes.every(Boolean)).toBe(true);
    expect(schemas.CreatedClient.parse(merchant)).toEqual(merchant);
    expect(schemas.CheckoutIntent.parse(intent)).toEqual(intent);
    expect(schemas.Transaction.parse(transaction)).toEqual(transaction);
    expect(TransactionPage.parse(page)).toEqual(page);
  });
});
