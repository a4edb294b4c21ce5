/**
 * Deploy-time settings of the settlement and the payout rails, from the CDK context
 * (`npx cdk deploy -c settlementSchedule='rate(6 hours)' -c railAApiBase=https://...`), checked at synth: a value
 * the functions' configuration (`lib/config.ts`) or EventBridge would refuse stops the synth, naming the setting,
 * instead of failing a cold start or a deploy.
 *
 * | Context key | Becomes | Default |
 * |---|---|---|
 * | `stage` | `dev` or `prod`: what the stateful stack keeps when deleted (`stageSetting`) | none: required |
 * | `adminJwksUrl`, `adminJwtIssuer`, `adminJwtAudience` | the admin token issuer: the functions' check and the admin routes' JWT authorizer | none; required in `prod` |
 * | `processorWebhookConcurrency` | the reserved concurrency of the processor webhook function (its function URL is public) | 50 |
 * | `apiThrottleRate`, `apiThrottleBurst` | the HTTP API stage's steady requests per second and burst, every route together | 100, 200 |
 * | `alarmEmail` | an email subscription to the alarm topic (confirm it from the mail AWS sends) | none |
 * | `settlementSchedule` | the EventBridge schedule of the settlement run (`SETTLEMENT_SCHEDULE`) | `cron(0 1 * * ? *)`: daily, 01:00 UTC |
 * | `settlementCutoff` | `SETTLEMENT_CUTOFF` of the functions that run settlement | `day_boundary` |
 * | `railAApiBase`, `railBApiBase` | `RAIL_A_API_BASE`, `RAIL_B_API_BASE` of the payout function (https) | unset: that rail's payouts answer failed |
 * | `consoleOidcIssuer`, `consoleOidcClientId`, `consoleOidcScopes` | the admin console's OpenID sign-in (`/admin/config.json`, its CSP's `connect-src`) | unset: token sign-in only; scopes `openid` |
 */
import { Schedule } from 'aws-cdk-lib/aws-events';
import type { IConstruct } from 'constructs';
import type { Config } from '../../lib/config';
import type { ConsoleOidcSettings } from '../shared/console-site';
import { parseRate } from '../shared/schedule';

export type SettlementCutoff = Config['SETTLEMENT_CUTOFF'];

/**
 * `prod`: the table, the secrets key, the secrets and the dead letters are retained when their stack is deleted
 * (or a resource replaced), and the table has deletion protection. `dev`: all of it is destroyed with the stack.
 */
export type Stage = 'dev' | 'prod';
const STAGES: readonly Stage[] = ['dev', 'prod'];

export interface SettlementSettings {
  /** Which succeeded transactions a run settles (decisions.md §1). */
  cutoff: SettlementCutoff;
  /** When EventBridge runs the settlement for every partner. */
  schedule: Schedule;
}

export interface RailSettings {
  railAApiBase: string | undefined;
  railBApiBase: string | undefined;
}

/** Daily at 01:00 UTC: an hour after the day boundary, so a `day_boundary` run settles the whole previous day. */
export const DEFAULT_SETTLEMENT_SCHEDULE = 'cron(0 1 * * ? *)';
const CUTOFFS: readonly SettlementCutoff[] = ['day_boundary', 'now'];

const contextString = (scope: IConstruct, key: string): string | undefined => {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new Error(`context ${key}: expected a string`);
  return value;
};

/**
 * The stage (`-c stage=prod`), required: there is no default, because either default fails someone. A default of
 * `dev` would let a forgotten flag deploy production with a table that is destroyed with its stack; a default of
 * `prod` would quietly keep a developer's tables and secrets. Throws on a missing or any other value.
 */
export function stageSetting(scope: IConstruct): Stage {
  const stage = contextString(scope, 'stage');
  if (stage === undefined) throw new Error(`context stage: required, ${STAGES.map((name) => `-c stage=${name}`).join(' or ')}`);
  if (!STAGES.includes(stage as Stage)) throw new Error(`context stage: expected ${STAGES.join(' or ')}, got "${stage}"`);
  return stage as Stage;
}

/** The admin token issuer (decisions.md §2): the functions verify admin bearer tokens against it. */
export interface AdminAuthSettings {
  jwksUrl: string;
  issuer: string;
  audience: string;
}

const ADMIN_AUTH_KEYS = { jwksUrl: 'adminJwksUrl', issuer: 'adminJwtIssuer', audience: 'adminJwtAudience' } as const;

/** The admin token settings not given (or empty), by context key. */
export function missingAdminAuthSettings(scope: IConstruct): string[] {
  return Object.values(ADMIN_AUTH_KEYS).filter((key) => (contextString(scope, key)?.trim() ?? '') === '');
}

/**
 * The admin token issuer (`-c adminJwksUrl=... -c adminJwtIssuer=... -c adminJwtAudience=...`), all three or none.
 * Required in `prod`: without it the admin routes have no authorizer and every admin function refuses to start,
 * so production would deploy without an admin API; the synth stops instead, naming the missing keys. In `dev` a
 * missing one leaves the admin API off (the caller warns).
 */
export function adminAuthSettings(scope: IConstruct, stage: Stage): AdminAuthSettings | undefined {
  const missing = missingAdminAuthSettings(scope);
  if (missing.length > 0) {
    if (stage === 'prod') {
      throw new Error(
        `context ${missing.join(', ')}: required for stage prod (the admin token issuer, all three of adminJwksUrl, adminJwtIssuer, adminJwtAudience); ` +
          'without them the admin routes would have no authorizer and the admin functions would refuse to start',
      );
    }
    return undefined;
  }
  const value = (key: string) => contextString(scope, key)?.trim() ?? '';
  return { jwksUrl: value(ADMIN_AUTH_KEYS.jwksUrl), issuer: value(ADMIN_AUTH_KEYS.issuer), audience: value(ADMIN_AUTH_KEYS.audience) };
}

const CONSOLE_OIDC_KEYS = { issuer: 'consoleOidcIssuer', clientId: 'consoleOidcClientId', scopes: 'consoleOidcScopes' } as const;

/**
 * The OpenID provider the admin console signs in with (`-c consoleOidcIssuer=https://... -c consoleOidcClientId=...`,
 * optionally `-c consoleOidcScopes='openid admin'`), or `undefined` without one (token sign-in; the caller warns).
 * The issuer and the client id go together; the issuer is https and is kept exactly as given, because the ID
 * token's `iss` must equal it; the scopes must include `openid`, for the ID token whose nonce the console checks.
 */
export function consoleOidcSettings(scope: IConstruct): ConsoleOidcSettings | undefined {
  const value = (key: string) => {
    const text = contextString(scope, key)?.trim();
    return text === '' ? undefined : text;
  };
  const issuer = value(CONSOLE_OIDC_KEYS.issuer);
  const clientId = value(CONSOLE_OIDC_KEYS.clientId);
  const scopes = value(CONSOLE_OIDC_KEYS.scopes);
  if (issuer === undefined && clientId === undefined) {
    if (scopes !== undefined) throw new Error('context consoleOidcScopes: given without consoleOidcIssuer and consoleOidcClientId');
    return undefined;
  }
  if (issuer === undefined || clientId === undefined) {
    throw new Error(`context ${issuer === undefined ? CONSOLE_OIDC_KEYS.issuer : CONSOLE_OIDC_KEYS.clientId}: required with ${issuer === undefined ? CONSOLE_OIDC_KEYS.clientId : CONSOLE_OIDC_KEYS.issuer} (the admin console's OpenID provider)`);
  }
  if (!URL.canParse(issuer) || new URL(issuer).protocol !== 'https:') throw new Error('context consoleOidcIssuer: expected an https URL (the provider’s issuer identifier)');
  const scopeList = (scopes ?? 'openid').split(/\s+/);
  if (!scopeList.includes('openid')) throw new Error(`context consoleOidcScopes: must include openid, got "${scopes}"`);
  return { issuer, clientId, scopes: scopeList.join(' ') };
}

/**
 * The processor webhook's reserved concurrency when the context gives none: room for the processor's bursts of
 * events (it retries what is throttled), and a cap that leaves the rest of the account's concurrency to the API.
 */
export const DEFAULT_PROCESSOR_WEBHOOK_CONCURRENCY = 50;

/**
 * The reserved concurrency of the processor webhook function (`-c processorWebhookConcurrency=50`). Its function
 * URL is public (auth NONE: the function checks the signature) and has no API throttle in front of it, so a flood
 * of requests, signed or not, could otherwise take the account's whole concurrency and starve every other
 * function; with it, the flood is throttled (429) at this many at once, and only this function's. Throws unless a
 * positive integer (0 would stop the function altogether). Lambda refuses a deploy that would leave the account
 * fewer than 100 unreserved executions.
 */
export function processorWebhookConcurrencySetting(scope: IConstruct): number {
  const value = contextString(scope, 'processorWebhookConcurrency');
  if (value === undefined) return DEFAULT_PROCESSOR_WEBHOOK_CONCURRENCY;
  if (!/^[1-9][0-9]*$/.test(value)) throw new Error(`context processorWebhookConcurrency: expected a positive integer, got "${value}"`);
  return Number(value);
}

/** Where alarms also send an email (`-c alarmEmail=oncall@example.com`); unset, the topic has no subscription. */
export function alarmEmailSetting(scope: IConstruct): string | undefined {
  const email = contextString(scope, 'alarmEmail');
  if (email !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw new Error('context alarmEmail: expected an email address');
  return email;
}

export interface ApiThrottleSettings {
  /** Steady-state requests per second across the stage, every route together. */
  rateLimit: number;
  /** Requests API Gateway admits at once above the steady rate (a token bucket this deep). */
  burstLimit: number;
}

/**
 * The stage-wide throttle (`-c apiThrottleRate=100 -c apiThrottleBurst=200`): a ceiling for the whole API in front
 * of the functions' per-partner rate limit (`RATE_LIMIT_PER_MINUTE`), so a flood answers 429 at the edge instead of
 * taking the account's Lambda concurrency. Throws unless both are positive integers and the burst is at least the rate.
 */
export function apiThrottleSettings(scope: IConstruct): ApiThrottleSettings {
  const integer = (key: string, fallback: number) => {
    const value = contextString(scope, key);
    if (value === undefined) return fallback;
    if (!/^[1-9][0-9]*$/.test(value)) throw new Error(`context ${key}: expected a positive integer, got "${value}"`);
    return Number(value);
  };
  const rateLimit = integer('apiThrottleRate', 100);
  const burstLimit = integer('apiThrottleBurst', Math.max(200, rateLimit));
  if (burstLimit < rateLimit) throw new Error('context apiThrottleBurst: expected at least apiThrottleRate');
  return { rateLimit, burstLimit };
}

/** The settlement's schedule and cutoff. Throws, naming the context key, on a value that would not deploy or run. */
export function settlementSettings(scope: IConstruct): SettlementSettings {
  const cutoff = contextString(scope, 'settlementCutoff') ?? 'day_boundary';
  if (!CUTOFFS.includes(cutoff as SettlementCutoff)) throw new Error(`context settlementCutoff: expected ${CUTOFFS.join(' or ')}`);
  const expression = contextString(scope, 'settlementSchedule') ?? DEFAULT_SETTLEMENT_SCHEDULE;
  try {
    return { cutoff: cutoff as SettlementCutoff, schedule: eventBridgeSchedule(expression) };
  } catch (error) {
    throw new Error(`context settlementSchedule: ${(error as Error).message}`);
  }
}

/** The rails' base URLs: https only, as `lib/config.ts` demands in AWS (each request carries the rail's API key). */
export function railSettings(scope: IConstruct): RailSettings {
  const base = (key: string) => {
    const value = contextString(scope, key);
    if (value === undefined) return undefined;
    if (!URL.canParse(value) || new URL(value).protocol !== 'https:') throw new Error(`context ${key}: expected an https URL`);
    return value;
  };
  return { railAApiBase: base('railAApiBase'), railBApiBase: base('railBApiBase') };
}

/**
 * An EventBridge schedule expression, checked as EventBridge checks it (CDK's `Schedule.expression` takes any
 * string, and a bad one would only fail the deploy): `rate(...)` by the rules the local timer shares
 * (`infra/shared/schedule.ts`), or `cron(minutes hours day-of-month month day-of-week year)`.
 */
export function eventBridgeSchedule(expression: string): Schedule {
  const text = expression.trim();
  if (/^rate\(/.test(text)) {
    parseRate(text, { allowSeconds: false });
    return Schedule.expression(text);
  }
  const cron = /^cron\((.*)\)$/.exec(text);
  if (cron === null) throw new Error(`expected rate(<n> <unit>) or cron(<minutes> <hours> <day-of-month> <month> <day-of-week> <year>), got "${text}"`);
  return Schedule.expression(`cron(${checkCronFields((cron[1] ?? '').trim().split(/\s+/)).join(' ')})`);
}

interface CronField {
  name: string;
  min: number;
  max: number;
  /** Names standing for min, min + 1, ... (`JAN`, `SUN`). */
  names?: readonly string[];
  /** Forms of this field only (`L`, `15W`, `6#3`). */
  special?: RegExp;
}

const CRON_FIELDS: readonly CronField[] = [
  { name: 'minutes', min: 0, max: 59 },
  { name: 'hours', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31, special: /^(L|LW|([1-9]|[12][0-9]|3[01])W)$/ },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'day-of-week', min: 1, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'], special: /^([1-7]|SUN|MON|TUE|WED|THU|FRI|SAT)?L$|^([1-7]|SUN|MON|TUE|WED|THU|FRI|SAT)#[1-5]$/i },
  { name: 'year', min: 1970, max: 2199 },
];

/** One value of a field: a number in its range, or one of its names. */
function isCronValue(field: CronField, token: string): boolean {
  if (/^[0-9]+$/.test(token)) return Number(token) >= field.min && Number(token) <= field.max;
  return field.names?.includes(token.toUpperCase()) ?? false;
}

/** One comma-separated part of a field: `*`, a value, a range `a-b`, either with a step `/n`, or a special form. */
function isCronPart(field: CronField, part: string): boolean {
  if (field.special?.test(part) === true) return true;
  const [range = '', step, ...rest] = part.split('/');
  if (rest.length > 0 || (step !== undefined && !/^[1-9][0-9]*$/.test(step))) return false;
  if (range === '*') return true;
  const bounds = range.split('-');
  return bounds.length <= 2 && bounds.every((bound) => isCronValue(field, bound));
}

/** The six fields, or an Error naming the first wrong one. */
function checkCronFields(fields: string[]): string[] {
  if (fields.length !== CRON_FIELDS.length) throw new Error(`a cron expression has 6 fields (minutes hours day-of-month month day-of-week year), got ${fields.length}`);
  const [, , dayOfMonth, , dayOfWeek] = fields;
  if ((dayOfMonth === '?') === (dayOfWeek === '?')) {
    throw new Error('exactly one of day-of-month and day-of-week must be ? (e.g. cron(0 1 * * ? *) or cron(0 1 ? * MON *))');
  }
  CRON_FIELDS.forEach((field, i) => {
    const value = fields[i] ?? '';
    const questionMarkAllowed = field.name === 'day-of-month' || field.name === 'day-of-week';
    if (value === '?' && questionMarkAllowed) return;
    if (!value.split(',').every((part) => isCronPart(field, part))) {
      throw new Error(`the ${field.name} field "${value}" is not valid (${field.min}-${field.max}${field.names === undefined ? '' : ` or ${field.names[0]}-${field.names.at(-1)}`}, with , - * /)`);
    }
  });
  return fields;
}
