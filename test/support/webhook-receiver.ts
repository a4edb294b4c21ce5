/**
 * A partner's webhook endpoint for tests: a real HTTP server on 127.0.0.1 that records every request (headers
 * and exact raw body) and answers as told, one scripted answer per request (200 once the script runs out).
 * Every body must be the documented partner webhook (`PartnerWebhookBody`, the OpenAPI document's `webhooks`):
 * `close()` fails the test file otherwise.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PartnerWebhookBody } from '../../lib/http/response-schemas';

export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Answer =
  /** Answer with this status (and headers). */
  | { status: number; headers?: Record<string, string> }
  /** Never answer (the connection stays open until the sender gives up or the receiver closes). */
  | { hang: true }
  /** Answer `status` once `release` resolves. */
  | { status: number; release: Promise<void> };

export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  private readonly script: Answer[] = [];
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  private constructor(
    private readonly server: Server,
    private readonly anyBody: boolean,
  ) {}

  /** `anyBody`: take bodies of any shape (a test of the HTTP sender itself, not of the service's webhooks). */
  static async start(options: { anyBody?: boolean } = {}): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server, options.anyBody === true);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        receiver.requests.push({
          method: request.method ?? '',
          path: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        receiver.notify();
        const answer = receiver.script.shift() ?? { status: 200 };
        if ('hang' in answer) return;
        const send = () => response.writeHead(answer.status, 'headers' in answer ? answer.headers : {}).end('{"ok":true}');
        if ('release' in answer) void answer.release.then(send);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** The receiver's URL for `path` (http: the tests run with ALLOW_INSECURE_WEBHOOK_URLS, as `npm start` does). */
  url(path = '/hook'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** Scripts the answers to the next requests, in order. */
  answer(...answers: Answer[]): void {
    this.script.push(...answers);
  }

  /** Resolves once `count` requests in total have arrived. */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  private notify(): void {
    const ready = this.waiters.filter((waiter) => this.requests.length >= waiter.count);
    this.waiters = this.waiters.filter((waiter) => this.requests.length < waiter.count);
    for (const waiter of ready) waiter.resolve();
  }

  /** Stops listening; throws when a body received was not the documented partner webhook. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (this.anyBody) return;
    const undocumented = this.requests.filter((request) => !PartnerWebhookBody.safeParse(parseJson(request.body)).success);
    if (undocumented.length > 0) throw new Error(`webhook bodies not of the documented shape (PartnerWebhookBody): ${undocumented.map((request) => request.body.slice(0, 300)).join('\n')}`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
