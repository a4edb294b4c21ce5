/**
 * What the example partner backend's test files (test/integration/examples/partner-backend-*.test.ts) share: the
 * example's own ServiceClient for a partner of the file's delivery world, and a checkout request for one of the
 * partner's clients. It loads no service module (the example's client imports only node:crypto), so a test file
 * may import it before it calls `useDeliveryWorld`.
 */
import { randomUUID } from 'node:crypto';
import { type CheckoutRequest, ServiceClient } from '../../examples/partner-backend/src/service-client';
import type { PartnerCredentials } from './api';
import type { DeliveryWorld } from './delivery-world';

/** What a test may change in a partner's client: a wrong HMAC secret, a listener for its retries. */
export interface ClientOptions {
  hmacSecret?: string;
  onRetry?: ConstructorParameters<typeof ServiceClient>[0]['onRetry'];
}

/** `clientFor(partner, options)`: the example's client as `partner`, against `world`'s API (call it from `beforeAll` on). */
export const serviceClientFor =
  (world: DeliveryWorld) =>
  (partner: PartnerCredentials, options: ClientOptions = {}) =>
    new ServiceClient({ baseUrl: world.api().baseUrl, apiKey: partner.apiKey, hmacSecret: options.hmacSecret ?? partner.hmacSecret, onRetry: options.onRetry });

/** A checkout of 12.34 USD for `clientId` under a fresh `partner_reference`, with `overrides` applied. */
export const checkoutRequest = (partner: PartnerCredentials, clientId: string, overrides: Partial<CheckoutRequest> = {}): CheckoutRequest => ({
  partner_id: partner.partnerId,
  client_id: clientId,
  amount: 12.34,
  currency: 'USD',
  email: 'buyer@example.com',
  partner_reference: `order-${randomUUID()}`,
  ...overrides,
});
