/**
 * The settlement continuation queue adapter (docs/settlement.md: a run that cannot finish in its function's time goes
 * on by itself): SQS `SendMessage` through the AWS SDK, in AWS and locally alike (locally `SETTLEMENT_QUEUE_URL`
 * points at the runtime's queue front, as `WEBHOOK_QUEUE_URL` does).
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { config, ConfigError } from '../config';
import type { RunContinuation, SettlementContinuations } from '../use-cases/ports/settlement-store';
import { clearContinuationPending, markContinuationPending } from '../store/settlements';
import { sqsClient } from '../webhooks/sqs-queue';

/**
 * How long a sent continuation counts as waiting to run (its scope sends no other meanwhile): longer than one runs
 * (15 minutes), so a continuation that was lost (its message dead-lettered) holds its scope no longer than this.
 */
const PENDING_MS = 16 * 60_000;

export const settlementContinuations: SettlementContinuations = {
  async continueRun(next: RunContinuation): Promise<'sent' | 'pending'> {
    if (config.SETTLEMENT_QUEUE_URL === undefined) throw new ConfigError('SETTLEMENT_QUEUE_URL: required to continue a settlement run');
    const now = new Date();
    if (!(await markContinuationPending(next.scope, new Date(now.getTime() + PENDING_MS).toISOString(), now.toISOString()))) return 'pending';
    try {
      await sqsClient.send(new SendMessageCommand({ QueueUrl: config.SETTLEMENT_QUEUE_URL, MessageBody: JSON.stringify(next) }));
    } catch (error) {
      // Not sent: the scope is free again for the next run to continue.
      await clearContinuationPending(next.scope);
      throw error;
    }
    return 'sent';
  },
  started: clearContinuationPending,
};
