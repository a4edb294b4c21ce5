/**
 * The local stand-in for the settlement schedule's EventBridge rule: runs the settlement function
 * (`functions/settlement-scheduled.ts`) every interval of `SETTLEMENT_SCHEDULE` (read by `infra/shared/schedule.ts`), with the
 * Scheduled Event and the Lambda context AWS would give it. Off unless `SETTLEMENT_SCHEDULE` is set.
 *
 * As with EventBridge, the first run is one interval after start. Runs never overlap: a tick while a run is still
 * going is skipped (not queued), so a slow run is not followed by a burst. A failed run is reported and the next
 * tick tries again; stopping waits for the run in progress.
 */
import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { invokeFunction } from '../lambda/adapter';

/** The longest delay one Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface RateTimerOptions {
  intervalMs: number;
  run: () => Promise<unknown>;
  /** A run that threw or rejected. */
  onError: (error: unknown) => void;
  /** A tick skipped because the previous run is still going. */
  onSkip?: () => void;
}

export interface RateTimer {
  /** No tick after this; resolves once the run in progress (if any) has finished. */
  stop(): Promise<void>;
}

export function startRateTimer(options: RateTimerOptions): RateTimer {
  const { intervalMs } = options;
  let nextAt = Date.now() + intervalMs;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const arm = () => {
    if (!stopped) timer = setTimeout(tick, Math.min(Math.max(0, nextAt - Date.now()), MAX_TIMER_MS));
  };
  const tick = () => {
    const now = Date.now();
    if (now < nextAt) return arm(); // a part of an interval longer than one timer
    // Ticks missed while the process was suspended are not made up: the next is the first one still ahead.
    nextAt += (Math.floor((now - nextAt) / intervalMs) + 1) * intervalMs;
    if (running === undefined) {
      running = Promise.resolve()
        .then(options.run)
        .then(
          () => undefined,
          (error: unknown) => options.onError(error),
        )
        .finally(() => {
          running = undefined;
        });
    } else {
      options.onSkip?.();
    }
    arm();
  };
  arm();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export type ScheduledHandler = (event: ScheduledEvent, context: Context) => Promise<unknown>;

/** A run of `handler` as EventBridge invokes a scheduled function: a Scheduled Event, and a context with its timeout. */
export function invokeAsScheduled(handler: ScheduledHandler, options: { functionName: string; timeoutMs: number }): () => Promise<unknown> {
  return () => invokeFunction(handler, scheduledEvent(), options.functionName, options.timeoutMs);
}

const scheduledEvent = (): ScheduledEvent => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '000000000000',
  // EventBridge writes whole seconds.
  time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  region: 'local',
  resources: [],
  detail: {},
});
