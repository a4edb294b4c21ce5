/**
 * The settlement continuation queue adapter (docs/settlement.md: a run that cannot finish in its function's time goes
 * on by itself): SQS `SendMessage` through the AWS SDK, in AWS and locally alike (locally `SETTLEMENT_QUEUE_URL`
 * points at the runtime's queue front, as `WEBHOOK_QUEUE_URL` does).
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { config, ConfigError } from '../config';
import type { RunContinuation, SettlementContinuations } from '../use-cases/ports/settlement-store';
import { sqsClient } from '../webhooks/sqs-queue';

export const settlementContinuations: SettlementContinuations = {
  async continueRun(next: RunContinuation): Promise<void> {
    if (config.SETTLEMENT_QUEUE_URL === undefined) throw new ConfigError('SETTLEMENT_QUEUE_URL: required to continue a settlement run');
    await sqsClient.send(new SendMessageCommand({ QueueUrl: config.SETTLEMENT_QUEUE_URL, MessageBody: JSON.stringify(next) }));
  },
};
