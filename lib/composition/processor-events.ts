/** Wiring for inbound processor events (POST /processor/webhook). */
import { processor } from '../processor';
import * as transactions from '../store/transactions';
import type { ProcessorEventDeps } from '../use-cases/processor-events';
import { paymentEventDeps } from './payment-events';

export const processorEventDeps: ProcessorEventDeps = { ...paymentEventDeps, processor, transactions };
