/**
 * Probing every route of the route table as a caller who must get nothing of another tenant's
 * (test/reliability/tenant-isolation.test.ts): each route's kind as its function declares it, a probe (one request
 * and the answer the docs promise), and the judgement of an answer: a leak is an answer other than promised, or one
 * that holds anything of the other tenant's that the probe did not send itself.
 */
import { readFileSync } from 'node:fs';
import type { RouteDefinition } from '../../../lib/routes';
import { type Answer, send as sendBytes } from '../fuzz/http';

export type Access = 'admin' | 'public' | 'partner-read' | 'partner-mutation';

/** A route's access, as its function declares it to the chain (`httpRoute({ access: ... })`). */
export function accessOf(route: RouteDefinition): Access {
  const source = readFileSync(new URL(`../../../functions/${route.name}.ts`, import.meta.url), 'utf8');
  const access = /access:\s*'(admin|public|partner-read|partner-mutation)'/.exec(source)?.[1];
  if (access === undefined) throw new Error(`functions/${route.name}.ts declares no access: classify it for the isolation matrix`);
  return access as Access;
}

export type Expect =
  /** Refused with this status and code (a HEAD: the status). */
  | { kind: 'refused'; status: number; code: string }
  /** Answered 200 with the caller's own data only (items, or a run's batches, all the caller's partner's). */
  | { kind: 'own' }
  /** The generic probe: any refusal (400, 403, 404). */
  | { kind: 'any-refusal' }
  /** Exactly the answer of another probe (by label, same method) that names nothing of the other tenant's. */
  | { kind: 'same-as'; label: string };

export interface Probe {
  label: string;
  route: RouteDefinition;
  /** After API_PREFIX, query included. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  expect: Expect;
}

export type { Answer };

/** Sends a probe; its answer carries how it breaks the route's documented contract, if it does. */
export const send = (baseUrl: string, probe: Probe): Promise<Answer> =>
  sendBytes(`${baseUrl}${probe.path}`, { method: probe.route.method, headers: probe.headers, body: probe.body === undefined ? undefined : Buffer.from(probe.body, 'utf8') });

/**
 * Why `answer` is a leak (or not what the docs promise), or undefined. `markers`: the other tenant's values;
 * `ownPartnerId`: the caller's partner; `answers`: the answers so far, by `<method> <label>`.
 */
export function leakOf(probe: Probe, answer: Answer, context: { markers: readonly string[]; ownPartnerId: string; answers: ReadonlyMap<string, Answer> }): string | undefined {
  const sent = `${probe.path} ${probe.body ?? ''}`;
  const leaked = context.markers.filter((marker) => answer.text.includes(marker) && !sent.includes(marker));
  if (leaked.length > 0) return `answer holds the other tenant's ${leaked.join(', ')}`;
  const head = probe.route.method === 'HEAD';
  const { expect: wanted } = probe;
  switch (wanted.kind) {
    case 'refused':
      if (answer.status !== wanted.status || (!head && answer.json?.code !== wanted.code)) return `expected ${wanted.status} ${wanted.code}`;
      return undefined;
    case 'any-refusal':
      if (![400, 403, 404].includes(answer.status)) return 'expected a refusal (400, 403 or 404)';
      return undefined;
    case 'own': {
      if (answer.status !== 200) return 'expected 200 with the caller`s own data';
      if (head) return undefined;
      const items: Array<Record<string, unknown>> = answer.json?.items ?? answer.json?.batches;
      if (!Array.isArray(items)) return 'expected a list';
      if (items.some((item) => (item.partnerId ?? item.partner_id) !== context.ownPartnerId)) return 'a listed item is not the caller`s';
      return undefined;
    }
    case 'same-as': {
      const other = context.answers.get(`${probe.route.method} ${wanted.label}`);
      if (other === undefined || answer.status !== other.status || JSON.stringify(answer.json) !== JSON.stringify(other.json)) return `answered unlike "${wanted.label}"`;
      return undefined;
    }
  }
}
