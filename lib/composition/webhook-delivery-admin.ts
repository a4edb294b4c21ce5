/** Wiring for the admin's delivery routes (list, resend): the table's deliveries, partners and endpoint breakers. */
import * as deliveries from '../store/deliveries';
import * as partners from '../store/partners';
import * as webhookEndpoints from '../store/webhook-endpoints';
import type { DeliveryAdminDeps } from '../use-cases/webhook-deliveries';

export const deliveryAdminDeps: DeliveryAdminDeps = { deliveries, partners, breakers: webhookEndpoints };
