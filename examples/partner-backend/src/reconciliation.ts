/**
 * Reconciliation: the service's own record of a payment (`GET /transactions/{svc_tx_id}`) is the truth; a webhook
 * is a prompt to look. An attempt's status is moved to the service's, forward only.
 *
 * After a webhook, reconciling runs in the background, once the webhook has been answered: the service waits
 * 10 s for that answer, and a read through the shared client (retries, a 30 s timeout a try) may take far longer.
 * In production this is a job on the partner's own queue; here it is an in-process task.
 */
import type { AttemptStore, CheckoutAttempt } from './attempts';
import type { ServiceClient } from './service-client';

export interface ReconciliationDeps {
  attempts: AttemptStore;
  service: Pick<ServiceClient, 'getTransaction'>;
}

/** Reads the payment's status from the service and moves the attempt to it (forward only). */
export async function reconcile(deps: ReconciliationDeps, attempt: CheckoutAttempt): Promise<CheckoutAttempt> {
  const transaction = await deps.service.getTransaction(attempt.svc_tx_id);
  return deps.attempts.advanceStatus(attempt.partner_reference, transaction.status);
}

/**
 * Reconciles attempts in the background. A failed read is logged and dropped: the webhook's status is already
 * stored, and `GET /orders` reconciles again on every read.
 */
export class BackgroundReconciler {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly deps: ReconciliationDeps,
    private readonly onError: (error: unknown, attempt: CheckoutAttempt) => void = (error, attempt) =>
      console.error(`[partner-backend] reconciling ${attempt.svc_tx_id} failed; GET /orders/${attempt.partner_reference} reconciles again:`, error),
  ) {}

  /** Starts reconciling `attempt` and returns at once. */
  schedule(attempt: CheckoutAttempt): void {
    const task = reconcile(this.deps, attempt).then(
      () => undefined,
      (error: unknown) => this.onError(error, attempt),
    );
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }

  /** Resolves once every reconciliation scheduled so far has finished (a graceful shutdown waits for it). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
