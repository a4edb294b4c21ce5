/** Wiring for the branding packet: the payees and the processor's publishable key (keys only: no Stripe SDK). */
import { publishableKeyFrom } from '../processor/keys';
import { loadProcessorKeys } from '../processor/process-keys';
import * as payees from '../store/payees';
import type { BrandingDeps } from '../use-cases/transactions';

export const brandingDeps: BrandingDeps = { payees, processor: { publishableKey: publishableKeyFrom(loadProcessorKeys) } };
