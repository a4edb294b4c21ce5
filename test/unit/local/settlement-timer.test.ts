/**
 * The local settlement schedule: `SETTLEMENT_SCHEDULE` as EventBridge reads a rate expression (infra/shared/schedule.ts),
 * and the timer that runs the settlement function on it (infra/local/runtime/settlement-timer.ts), on jest's fake clock.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { parseRate } from '../../../infra/shared/schedule';
import { invokeAsScheduled, startRateTimer } from '../../../infra/local/runtime/settlement-timer';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('parseRate (EventBridge rate expressions)', () => {
  it.each([
    ['rate(1 second)', SECOND],
    ['rate(30 seconds)', 30 * SECOND],
    ['rate(1 minute)', MINUTE],
    ['rate(5 minutes)', 5 * MINUTE],
    ['rate(1 hour)', HOUR],
    ['rate(12 hours)', 12 * HOUR],
    ['rate(1 day)', DAY],
    ['rate(30 days)', 30 * DAY],
    [' rate(2 minutes) ', 2 * MINUTE],
  ])('reads %j as %i ms', (expression, intervalMs) => {
    expect(parseRate(expression, { allowSeconds: true })).toBe(intervalMs);
  });

  it('says a cron expression is AWS-only, and shows the local form', () => {
    expect(() => parseRate('cron(0 2 * * ? *)', { allowSeconds: true })).toThrow(/cron expressions are AWS-only.*rate\(5 minutes\)/);
  });

  it('takes seconds only where allowed (EventBridge itself runs at most once a minute)', () => {
    expect(() => parseRate('rate(30 seconds)', { allowSeconds: false })).toThrow(/seconds are allowed locally only.*rate\(1 minute\)/);
    expect(parseRate('rate(2 minutes)', { allowSeconds: false })).toBe(2 * MINUTE);
  });

  it.each([
    ['rate(1 minutes)', /rate\(1 minute\)/],
    ['rate(5 minute)', /rate\(5 minutes\)/],
    ['rate(0 minutes)', /a whole number of at least 1/],
    ['rate(-5 minutes)', /rate\(<n> <unit>\)/],
    ['rate(1.5 hours)', /rate\(<n> <unit>\)/],
    ['rate(05 minutes)', /rate\(<n> <unit>\)/],
    ['rate(2 weeks)', /unit must be second\(s\), minute\(s\), hour\(s\) or day\(s\)/],
    ['rate(5  minutes)', /rate\(<n> <unit>\)/],
    ['RATE(5 MINUTES)', /rate\(<n> <unit>\)/],
    ['every 5 minutes', /rate\(<n> <unit>\)/],
    ['rate(99999999999999999 days)', /too long/],
  ])('refuses %j with a message that says what to write', (expression, message) => {
    expect(() => parseRate(expression, { allowSeconds: true })).toThrow(message);
  });
});

describe('startRateTimer', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  /** A run that stays running until `finish()` is called. */
  const pendingRun = () => {
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    return { done, finish: () => finish() };
  };

  it('runs once every interval, the first one interval after start (as EventBridge does)', async () => {
    // Arrange
    jest.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') });
    const run = jest.fn(async () => undefined);
    const timer = startRateTimer({ intervalMs: 10 * SECOND, run, onError: () => undefined });

    // Act / Assert
    await jest.advanceTimersByTimeAsync(10 * SECOND - 1);
    expect(run).toHaveBeenCalledTimes(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(run).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(20 * SECOND);
    expect(run).toHaveBeenCalledTimes(3);
    await timer.stop();
  });

  it('never overlaps runs: a tick while a run is still going is skipped, not queued', async () => {
    // Arrange: the first run takes 35 s on a 10 s schedule
    jest.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') });
    const slow = pendingRun();
    const run = jest.fn<() => Promise<void>>().mockReturnValueOnce(slow.done).mockResolvedValue(undefined);
    const skipped = jest.fn();
    const timer = startRateTimer({ intervalMs: 10 * SECOND, run, onError: () => undefined, onSkip: skipped });

    // Act
    await jest.advanceTimersByTimeAsync(35 * SECOND);
    const whileRunning = run.mock.calls.length;
    slow.finish();
    await jest.advanceTimersByTimeAsync(5 * SECOND);

    // Assert: ticks at 20 s and 30 s skipped; the 40 s tick runs
    expect(whileRunning).toBe(1);
    expect(skipped).toHaveBeenCalledTimes(2);
    expect(run).toHaveBeenCalledTimes(2);
    await timer.stop();
  });

  it('reports a failed run (thrown or rejected) and runs again on the next tick', async () => {
    jest.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') });
    const failure = new Error('table unavailable');
    const run = jest
      .fn<() => Promise<void>>()
      .mockImplementationOnce(() => {
        throw failure;
      })
      .mockRejectedValueOnce(failure)
      .mockResolvedValue(undefined);
    const onError = jest.fn();
    const timer = startRateTimer({ intervalMs: SECOND, run, onError });

    await jest.advanceTimersByTimeAsync(3 * SECOND);

    expect(run).toHaveBeenCalledTimes(3);
    expect(onError.mock.calls).toEqual([[failure], [failure]]);
    await timer.stop();
  });

  it('stop() waits for the run in progress and no run starts after it', async () => {
    // Arrange: a run in progress
    jest.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') });
    const slow = pendingRun();
    const run = jest.fn<() => Promise<void>>().mockReturnValueOnce(slow.done).mockResolvedValue(undefined);
    const timer = startRateTimer({ intervalMs: SECOND, run, onError: () => undefined });
    await jest.advanceTimersByTimeAsync(SECOND);

    // Act
    let stopped = false;
    const stopping = timer.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(5 * SECOND);
    const stoppedBeforeRunEnded = stopped;
    slow.finish();
    await stopping;
    await jest.advanceTimersByTimeAsync(5 * SECOND);

    // Assert
    expect(stoppedBeforeRunEnded).toBe(false);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('waits out an interval longer than one Node timer can (about 24.8 days) instead of firing at once', async () => {
    jest.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') });
    const run = jest.fn(async () => undefined);
    const timer = startRateTimer({ intervalMs: 30 * DAY, run, onError: () => undefined });

    await jest.advanceTimersByTimeAsync(29 * DAY);
    const before = run.mock.calls.length;
    await jest.advanceTimersByTimeAsync(DAY);

    expect(before).toBe(0);
    expect(run).toHaveBeenCalledTimes(1);
    await timer.stop();
  });
});

describe('invokeAsScheduled', () => {
  it('invokes a handler with an EventBridge Scheduled Event and a Lambda context, as AWS would', async () => {
    // Arrange
    const calls: Array<[ScheduledEvent, Context]> = [];
    const handler = async (event: ScheduledEvent, context: Context) => void calls.push([event, context]);

    // Act
    await invokeAsScheduled(handler, { functionName: 'settlement-scheduled', timeoutMs: 60_000 })();

    // Assert
    const [event, context] = calls[0] ?? [];
    expect(event).toEqual({
      version: '0',
      id: expect.any(String),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      region: 'local',
      resources: [],
      detail: {},
    });
    expect(context?.functionName).toBe('settlement-scheduled');
    expect(context?.getRemainingTimeInMillis()).toBeGreaterThan(59_000);
  });
});

describe('the local runtime with SETTLEMENT_SCHEDULE', () => {
  it('refuses a schedule it cannot run before it starts anything, saying why', async () => {
    const { startLocalRuntime } = await import('../../../infra/local/runtime/runtime');
    const options = {
      httpPort: 1,
      dynamoPort: 1,
      dataDir: undefined,
      tableName: 'unused',
      processor: { port: 1, secretKey: 'sk_test_unused', publishableKey: 'pk_test_unused', webhookSecret: 'whsec_unused' },
      rails: { port: 1, keys: { railA: 'a', railB: 'b' } },
      webhookQueue: { port: 1 },
    };

    await expect(startLocalRuntime({ ...options, settlementSchedule: 'cron(0 2 * * ? *)' })).rejects.toThrow(
      /SETTLEMENT_SCHEDULE "cron\(0 2 \* \* \? \*\)": cron expressions are AWS-only/,
    );
    await expect(startLocalRuntime({ ...options, settlementSchedule: 'rate(5 minute)' })).rejects.toThrow(/SETTLEMENT_SCHEDULE "rate\(5 minute\)": write rate\(5 minutes\)/);
  });
});
