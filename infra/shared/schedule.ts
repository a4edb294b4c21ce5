/**
 * EventBridge rate expressions (`rate(5 minutes)`), read as EventBridge reads them, for the local settlement
 * timer (`SETTLEMENT_SCHEDULE`). Pure: no I/O, no clock.
 *
 * EventBridge's rules, kept here so that a schedule that runs locally also deploys: a whole number of at least 1
 * and a unit, singular for 1 (`rate(1 hour)`) and plural otherwise (`rate(2 hours)`); the units minute, hour and
 * day. Locally seconds are allowed too (`allowSeconds`), so a sandbox can settle every few seconds; EventBridge
 * itself runs a rule at most once a minute. Cron expressions are AWS-only: EventBridge evaluates them, the local
 * timer does not.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

const EXAMPLE = 'rate(5 minutes)';
const FORM = `rate(<n> <unit>), e.g. ${EXAMPLE}`;

/**
 * The interval in milliseconds of a rate expression. Throws an Error whose message says what is wrong and what to
 * write instead (the caller adds the variable's name).
 */
export function parseRate(expression: string, options: { allowSeconds: boolean }): number {
  const text = expression.trim();
  if (/^cron\(/i.test(text)) {
    throw new Error(`cron expressions are AWS-only (EventBridge evaluates them); locally use ${FORM}`);
  }
  const match = /^rate\(([0-9]+) ([a-z]+)\)$/.exec(text);
  if (match === null || /^0[0-9]/.test(match[1] ?? '')) throw new Error(`expected ${FORM}`);
  const value = Number(match[1]);
  const word = match[2] ?? '';
  const unit = word.endsWith('s') ? word.slice(0, -1) : word;
  const unitMs = UNIT_MS[unit];
  if (unitMs === undefined) throw new Error('the unit must be second(s), minute(s), hour(s) or day(s)');
  if (value < 1) throw new Error('the rate must be a whole number of at least 1');
  const expected = value === 1 ? unit : `${unit}s`;
  if (word !== expected) throw new Error(`write rate(${value} ${expected}) (EventBridge wants the singular for 1, the plural otherwise)`);
  if (unit === 'second' && !options.allowSeconds) {
    throw new Error('seconds are allowed locally only: EventBridge runs a rule at most once a minute; use rate(1 minute) or more');
  }
  const intervalMs = value * unitMs;
  if (!Number.isSafeInteger(intervalMs)) throw new Error(`the rate is too long; use ${FORM}`);
  return intervalMs;
}
